import type { Queryable } from '../db/database.ts';
import { InputError } from '../input-error.ts';
import { requireManager } from '../workspaces/member-store.ts';
import { assertWorkspaceExists } from '../workspaces/workspace-store.ts';
import { labelsFor, type Labels } from './inputs.ts';
import { workspaceOf, type TargetKind } from './target-store.ts';

/** Where an operation came from: the operator CLI, internal GraphQL, or the integrations page. */
export const SOURCES = ['cli', 'graphql', 'page'] as const;
export type Source = (typeof SOURCES)[number];

/**
 * Who acts, in which workspace, through which way in. `memberEmail` names an owner or admin of
 * the workspace (the contract: keys are made "only by users with the role Owner or Admin"); it is
 * null only at the CLI without `--member`, where the operator of the server acts as before (that
 * form is deprecated: README, Operator CLI).
 */
export interface Actor {
  workspaceId: string;
  memberEmail: string | null;
  source: Source;
  /** How the caller names an input where it departs from its way in's usual names (`webhook events --set`). */
  labels?: Partial<Labels>;
}

/** The labels of the actor's way in (inputs.ts). */
export const labelsOf = (actor: Actor): Labels => labelsFor(actor.source === 'cli', actor.labels);

/** The actor of a command that names only what it acts on (`key revoke --id`): in that thing's workspace. */
export async function actorByTarget(db: Queryable, kind: TargetKind, id: string, memberEmail: string | null, source: Source): Promise<Actor> {
  return { workspaceId: await workspaceOf(db, kind, id), memberEmail, source };
}

/**
 * Refuses an actor who may not manage the workspace's integrations (`NotPermittedError`); returns
 * the acting member's id, or null for the operator.
 */
export async function authorize(db: Queryable, actor: Actor): Promise<string | null> {
  if (actor.memberEmail === null) {
    if (actor.source !== 'cli') throw new InputError('The acting member is required');
    await assertWorkspaceExists(db, actor.workspaceId);
    return null;
  }
  return requireManager(db, actor.workspaceId, actor.memberEmail, { named: actor.source === 'cli' ? undefined : 'member' });
}
