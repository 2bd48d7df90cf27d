import { columnOf, personalFields, type ResourceDefinition } from '../model/resource-registry.ts';
import { ApiError } from '../errors.ts';

/** The refusal of a request that would read or filter on personal data without the grant. */
export function personalDataRefused(what: readonly string[]): ApiError {
  return new ApiError('PERSONAL_DATA_NOT_GRANTED', `This token has no personal-data grant, and the request reads or filters on personal data: ${what.join(', ')}.`);
}

/**
 * What one request may read of personal data, and what it read: a caller without the grant (an
 * internal token without `--personal-data`) gets no statement that reads a personal column or
 * compares one, whatever its document says (the internal endpoint refuses such a document before
 * it runs; this is the floor under that check). The columns the request's statements read are
 * kept for the audit trail.
 */
export class PersonalAccess {
  readonly granted: boolean;
  readonly #read = new Set<string>();

  constructor(granted: boolean) {
    this.granted = granted;
  }

  /**
   * The fields of `target` a statement reads: `wanted` (every field when absent) without the
   * personal ones that are not selected, and with none at all without the grant (which refuses a
   * selected one).
   */
  fieldsToRead(target: ResourceDefinition, wanted: readonly string[] | undefined, selected: (field: string) => boolean): string[] | undefined {
    const personal = personalFields(target);
    if (personal.size === 0) return wanted ? [...wanted] : undefined;
    const asked = (wanted ?? Object.keys(target.fields)).filter((field) => !personal.has(field) || selected(field));
    this.refuseWithoutGrant(target, asked);
    return asked;
  }

  /** Refuses, without the grant, any personal field of `target` among `fields`, or any field of a target that is personal as a whole. */
  refuseWithoutGrant(target: ResourceDefinition, fields: Iterable<string>): void {
    if (this.granted) return;
    if (target.personalData) throw personalDataRefused([target.name]);
    const personal = personalFields(target);
    const named = [...fields].filter((field) => personal.has(field)).map((field) => `${target.name}.${field}`);
    if (named.length > 0) throw personalDataRefused(named);
  }

  /** `table.column` of each personal field among `fields`, as the audit trail names them. */
  columns(target: ResourceDefinition, fields: Iterable<string>): string[] {
    const personal = personalFields(target);
    if (personal.size === 0) return [];
    return [...new Set(fields)].filter((field) => personal.has(field)).map((field) => `${target.table}.${columnOf(target, field)}`);
  }

  /** Counts a statement's personal columns as read, once it has run. */
  note(columns: readonly string[]): void {
    for (let i = 0; i < columns.length; i += 1) this.#read.add(columns[i]!);
  }

  /** The personal columns the request's statements read, sorted. */
  get read(): string[] {
    return [...this.#read].sort();
  }
}
