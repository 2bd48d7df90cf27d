import type { Queryable } from '../db/database.ts';

/** A link made, not yet opened: when it must be opened by. */
export interface PortalLinkRow {
  id: string;
  linkExpiresAt: Date;
}

/** An open session as each request of the page finds it: its workspace, its member (still an owner or admin), what it may do. */
export interface PortalSession {
  id: string;
  workspaceId: string;
  workspaceName: string;
  memberEmail: string;
  role: 'owner' | 'admin';
  readOnly: boolean;
  expiresAt: Date;
}

/** Records a link for the workspace's member of that e-mail (checked an owner or admin before): the hash of its secret, the session's life, the time it must be opened by. */
export async function insertPortalLink(
  db: Queryable,
  input: { workspaceId: string; memberEmail: string; readOnly: boolean; ttlSeconds: number; linkHash: Buffer; linkLifeSeconds: number },
): Promise<PortalLinkRow> {
  const inserted = await db.query<{ id: string; link_expires_at: Date }>(
    `INSERT INTO portal_sessions (workspace_id, member_id, read_only, ttl_seconds, link_hash, link_expires_at)
     SELECT $1, m.id, $3, $4, $5, now() + make_interval(secs => $6) FROM members m WHERE m.workspace_id = $1 AND lower(m.email) = lower($2)
     RETURNING id, link_expires_at`,
    [input.workspaceId, input.memberEmail, input.readOnly, input.ttlSeconds, input.linkHash, input.linkLifeSeconds],
  );
  const row = inserted.rows[0]!;
  return { id: row.id, linkExpiresAt: row.link_expires_at };
}

const SESSION_COLUMNS = `s.id, s.workspace_id, w.name AS workspace_name, m.email, m.role, s.read_only, s.expires_at`;
type SessionRow = { id: string; workspace_id: string; workspace_name: string; email: string; role: 'owner' | 'admin'; read_only: boolean; expires_at: Date };
const sessionOf = (row: SessionRow): PortalSession => ({
  id: row.id,
  workspaceId: row.workspace_id,
  workspaceName: row.workspace_name,
  memberEmail: row.email,
  role: row.role,
  readOnly: row.read_only,
  expiresAt: row.expires_at,
});

/**
 * Opens the link whose secret hashes to `linkHash`, once: in one statement, so that of two
 * openings at once only one starts a session. Null for a link used, expired, revoked or unknown,
 * or whose member may no longer manage the workspace.
 */
export async function openPortalLink(db: Queryable, linkHash: Buffer, tokenHash: Buffer): Promise<PortalSession | null> {
  const opened = await db.query<SessionRow>(
    `WITH opened AS (
       UPDATE portal_sessions SET opened_at = now(), token_hash = $2, expires_at = now() + make_interval(secs => ttl_seconds)
        WHERE link_hash = $1 AND opened_at IS NULL AND revoked_at IS NULL AND link_expires_at > now()
        RETURNING id, workspace_id, member_id, read_only, expires_at
     )
     SELECT ${SESSION_COLUMNS} FROM opened s
       JOIN members m ON m.id = s.member_id AND m.role IN ('owner', 'admin')
       JOIN workspaces w ON w.id = s.workspace_id`,
    [linkHash, tokenHash],
  );
  return opened.rows[0] ? sessionOf(opened.rows[0]) : null;
}

/**
 * The session a token's hash names, while it lasts: not expired, not revoked, its member still an
 * owner or admin of its workspace. One statement per request of the page.
 */
export async function findPortalSession(db: Queryable, tokenHash: Buffer): Promise<PortalSession | null> {
  const found = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM portal_sessions s
       JOIN members m ON m.id = s.member_id AND m.role IN ('owner', 'admin')
       JOIN workspaces w ON w.id = s.workspace_id
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
    [tokenHash],
  );
  return found.rows[0] ? sessionOf(found.rows[0]) : null;
}

/** Ends every session of a workspace, and every link of it not yet opened; how many were still live. */
export async function revokePortalSessions(db: Queryable, workspaceId: string): Promise<number> {
  const revoked = await db.query(
    `UPDATE portal_sessions SET revoked_at = now()
      WHERE workspace_id = $1 AND revoked_at IS NULL
        AND ((opened_at IS NULL AND link_expires_at > now()) OR expires_at > now())`,
    [workspaceId],
  );
  return revoked.rowCount ?? 0;
}
