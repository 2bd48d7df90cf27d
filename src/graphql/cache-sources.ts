import {
  getNamedType,
  isObjectType,
  Kind,
  parse,
  type ArgumentNode,
  type DirectiveNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { columnOf, type RelationDefinition, type ResourceDefinition, type ResourceRegistry } from '../model/resource-registry.ts';
import { workspacePath, type WatchedTable } from '../sql/data-version-triggers.ts';
import { operationSources, type OperationName } from './operations.ts';

/**
 * What the answer cache keeps, declared once: each cached answer, the fixed operations that build
 * it (the whole list, and its pieces again after a change) and the resource each of its pieces is.
 * Everything else the cache must know follows from the operations' reads (`cacheSources`): the
 * tables whose writes move a workspace's data version (the generated triggers of
 * `src/db/code/watched-tables.generated.sql`), and the rows whose `xmin` make up a piece's
 * version (`src/answer-cache/piece-version-store.ts`).
 *
 * `folded`: rows of a list under a piece that the version cannot join one by one (a run's
 * sessions). Every change to them must rewrite the piece's own row, in the same transaction, so that
 * its `xmin` moves; the database does that (named here, once), and the build refuses a list under a
 * piece that is not named.
 */
export const CACHED_ANSWERS = {
  courses: {
    operations: ['courses', 'coursesOfRuns'],
    piece: 'CourseRun',
    folded: { sessions: "the listing triggers (src/db/code/listings.sql) rewrite the run's row whenever one of its sessions changes" },
  },
  bookings: { operations: ['bookings', 'bookingsOfIds'], piece: 'Booking', folded: {} },
} as const satisfies Record<string, { operations: readonly OperationName[]; piece: string; folded: Record<string, string> }>;

export type CachedAnswer = keyof typeof CACHED_ANSWERS;

/** A row joined to a piece's own row by a `one` relation: its `xmin` is part of the piece's version. */
export interface JoinedSource {
  relation: string;
  table: string;
  /** The piece row's column and the joined row's column that match. */
  localColumn: string;
  foreignColumn: string;
  /** The joined row may be missing (LEFT JOIN). */
  optional: boolean;
  /** The joined row is read only when this variable is true (`@include(if: $x)`): otherwise it is not even named. */
  includedIf?: string;
  /** The joined table's workspace column, when it has one: its rows written since a mark are found per workspace. */
  workspaceColumn?: string;
}

/** What one piece of a cached answer is built from. */
export interface PieceShape {
  resource: string;
  table: string;
  /** The column of its key: a piece's id. */
  key: string;
  /** The list of the workspace the pieces are: the parent's relation (its order, a set column). */
  list: { workspaceColumn: string; present?: string; order: Array<{ column: string; direction: 'asc' | 'desc' }> };
  joined: JoinedSource[];
  /** Lists under the piece, by relation name: declared `folded` (see CACHED_ANSWERS). */
  folded: string[];
}

/** What a cached answer reads: every table with the columns its operations select, and its pieces' shape. */
export interface AnswerSources {
  answer: CachedAnswer;
  /** Table → columns, every `@include` taken, by the operation that reads them. */
  reads: Map<OperationName, Map<string, Set<string>>>;
  piece: PieceShape;
}

/** A read the cache cannot follow: the build stops and names the operation and the table. */
export class CacheSourceError extends Error {
  override name = 'CacheSourceError';
}

interface Frame {
  resource: ResourceDefinition;
  /** Set inside a piece: how the rows of this frame reach the piece's own row. */
  inPiece: boolean;
  includedIf?: string;
}

const includeVariable = (directives: readonly DirectiveNode[] | undefined): string | undefined => {
  const include = directives?.find((directive) => directive.name.value === 'include');
  const argument = include?.arguments?.find((arg) => arg.name.value === 'if')?.value;
  return argument?.kind === Kind.VARIABLE ? argument.name.value : undefined;
};

/** The fields named by a `filter` argument's object (`{ status: { eq: … } }`), literal or not. */
function filteredFields(args: readonly ArgumentNode[] | undefined): string[] {
  const filter = args?.find((arg) => arg.name.value === 'filter')?.value;
  return filter?.kind === Kind.OBJECT ? filter.fields.map((field) => field.name.value) : [];
}

/** Every cached answer's sources, derived from the fixed operations over `schema` and `registry`. */
export function cacheSources(schema: GraphQLSchema, registry: ResourceRegistry, documents: Readonly<Record<OperationName, string>> = operationSources): Map<CachedAnswer, AnswerSources> {
  const found = new Map<CachedAnswer, AnswerSources>();
  for (const [answer, declared] of Object.entries(CACHED_ANSWERS) as Array<[CachedAnswer, (typeof CACHED_ANSWERS)[CachedAnswer]]>) {
    const reads = new Map<OperationName, Map<string, Set<string>>>();
    let piece: PieceShape | undefined;
    for (const operation of declared.operations) {
      const walked = walkOperation(schema, registry, operation, documents[operation], declared.piece, Object.keys(declared.folded));
      reads.set(operation, walked.reads);
      piece ??= walked.piece;
    }
    if (!piece) throw new CacheSourceError(`src/graphql/cache-sources.ts: the cached answer ${answer} declares pieces of ${declared.piece}, which its operations do not list`);
    found.set(answer, { answer, reads, piece });
  }
  return found;
}

function walkOperation(schema: GraphQLSchema, registry: ResourceRegistry, operation: OperationName, source: string, pieceName: string, folded: readonly string[]) {
  const document = parse(source);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const reads = new Map<string, Set<string>>();
  let piece: PieceShape | undefined;
  const read = (table: string, column: string) => {
    const columns = reads.get(table) ?? new Set<string>();
    reads.set(table, columns.add(column));
  };
  const refuse = (table: string, why: string) => {
    throw new CacheSourceError(`src/graphql/operations.ts: the cached operation ${operation} reads ${table}, ${why}`);
  };

  const walk = (selectionSet: SelectionSetNode, type: GraphQLObjectType, frame: Frame | undefined, relationName?: string, includedIf?: string): void => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value)!;
        walk(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) as GraphQLObjectType, frame, relationName, includedIf);
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, selection.typeCondition ? (schema.getType(selection.typeCondition.name.value) as GraphQLObjectType) : type, frame, relationName, includedIf);
        continue;
      }
      const name = selection.name.value;
      if (name.startsWith('__')) continue;
      const fieldType = getNamedType(type.getFields()[name]!.type);
      const fieldIncludedIf = includeVariable(selection.directives) ?? includedIf;
      const owner = frame?.resource;
      if (owner && name in owner.fields && !isObjectType(fieldType)) {
        read(owner.table, columnOf(owner, name));
        continue;
      }
      if (!isObjectType(fieldType) || !selection.selectionSet) continue;
      if (!registry.has(fieldType.name)) {
        // A connection or its edges: the relation is the field's name without `Connection`.
        walk(selection.selectionSet, fieldType, frame, relationName ?? name.replace(/Connection$/, ''), fieldIncludedIf);
        continue;
      }
      const target = registry.get(fieldType.name);
      read(target.table, columnOf(target, target.key));
      const relation: RelationDefinition | undefined = owner?.relations?.[relationName ?? name];
      if (owner && relation) {
        read(owner.table, columnOf(owner, relation.localField));
        read(target.table, columnOf(target, relation.foreignField));
        for (const term of relation.orderBy ?? []) read(target.table, columnOf(target, term.field));
        if (relation.present) read(target.table, columnOf(target, relation.present));
      }
      // The fields a list is filtered on: `sessions(filter: { status: … })` reads `status`.
      for (const field of filteredFields(selection.arguments)) if (field in target.fields) read(target.table, columnOf(target, field));
      if (target.workspaceField) read(target.table, columnOf(target, target.workspaceField));
      let next: Frame = { resource: target, inPiece: frame?.inPiece ?? false, ...(fieldIncludedIf ? { includedIf: fieldIncludedIf } : {}) };
      if (!frame?.inPiece && target.name === pieceName) {
        if (!owner || !relation || relation.kind !== 'many') refuse(target.table, `pieces of ${pieceName}, which it does not list as a relation of a workspace`);
        const workspaceColumn = columnOf(target, relation!.foreignField);
        piece ??= {
          resource: target.name,
          table: target.table,
          key: columnOf(target, target.key),
          list: {
            workspaceColumn,
            ...(relation!.present ? { present: columnOf(target, relation!.present) } : {}),
            order: [...(relation!.orderBy ?? []), { field: target.key, direction: relation!.orderBy?.at(-1)?.direction ?? 'asc' }]
              .filter((term, at, all) => all.findIndex((other) => other.field === term.field) === at)
              .map((term) => ({ column: columnOf(target, term.field), direction: term.direction ?? 'asc' })),
          },
          joined: [],
          folded: [],
        };
        next = { resource: target, inPiece: true };
      } else if (frame?.inPiece && owner && piece) {
        if (!relation) refuse(target.table, `through ${owner.name}.${name}, which is no relation the cache can follow`);
        if (relation!.kind === 'many') {
          if (!folded.includes(relationName ?? name)) {
            refuse(target.table, `a list (${owner.name}.${relationName ?? name}) under each piece of ${pieceName} that no declaration folds into the piece's row: declare it in CACHED_ANSWERS (src/graphql/cache-sources.ts) with the trigger that rewrites the piece's row`);
          }
          if (!piece.folded.includes(relationName ?? name)) piece.folded.push(relationName ?? name);
        } else if (owner.table !== piece.table) {
          refuse(target.table, `through ${owner.name}.${name}, a row two relations away from the piece's own row, which a piece's version does not join`);
        } else if (!piece.joined.some((joined) => joined.relation === name)) {
          piece.joined.push({
            relation: name,
            table: target.table,
            localColumn: columnOf(owner, relation!.localField),
            foreignColumn: columnOf(target, relation!.foreignField),
            optional: relation!.optional ?? false,
            ...(fieldIncludedIf ? { includedIf: fieldIncludedIf } : {}),
            ...(target.workspaceField ? { workspaceColumn: columnOf(target, target.workspaceField) } : {}),
          });
        }
      }
      walk(selection.selectionSet, fieldType, next, undefined, next.inPiece ? fieldIncludedIf : undefined);
    }
  };
  const definition = document.definitions.find((node) => node.kind === Kind.OPERATION_DEFINITION)!;
  walk(definition.selectionSet, schema.getQueryType()!, undefined);
  return { reads, piece };
}

/** The tables whose writes must move the data version: every table a cached answer reads. */
export function watchedTables(sources: ReadonlyMap<CachedAnswer, AnswerSources>): string[] {
  const tables = new Set<string>();
  for (const answer of sources.values()) for (const reads of answer.reads.values()) for (const table of reads.keys()) tables.add(table);
  return [...tables].sort();
}

/** Every watched table with the operations that read it and how its rows reach their workspace, for its triggers. */
export function watchedTableList(sources: ReadonlyMap<CachedAnswer, AnswerSources>, registry: ResourceRegistry): WatchedTable[] {
  const resources = new Map(registry.all().map((resource) => [resource.table, resource]));
  return watchedTables(sources).map((table) => {
    const readBy = new Map<string, string[]>();
    for (const answer of sources.values()) {
      for (const [operation, reads] of answer.reads) if (reads.has(table)) readBy.set(operation, [...reads.get(table)!].sort());
    }
    const path = workspacePath(resources.get(table)!);
    if (path !== 'self' && path !== 'column' && path !== 'through') {
      throw new CacheSourceError(`src/graphql/operations.ts: the cached operation ${[...readBy.keys()][0]} reads ${table}, but ${path}: no data-version trigger can follow it`);
    }
    return { table, readBy, path };
  });
}

/**
 * The reads of cached operations that `watched` (the tables whose data-version triggers the database
 * has) misses: a line naming the operation, the table and its columns. Empty when every read is watched.
 */
export function unwatchedReads(sources: ReadonlyMap<CachedAnswer, AnswerSources>, watched: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const answer of sources.values()) {
    for (const [operation, reads] of answer.reads) {
      for (const [table, columns] of reads) {
        if (watched.has(table)) continue;
        problems.push(
          `the cached operation ${operation} (src/graphql/operations.ts) reads ${table} (${[...columns].sort().join(', ')}), which the answer cache does not watch: no data-version trigger moves the workspace's version when it changes. Run npm run generate (it writes the triggers of every table the cached operations read), then npm run build.`,
        );
      }
    }
  }
  return problems;
}
