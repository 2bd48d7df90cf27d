/** The session `POST /integrations/api/session` hands out for a link (docs/integrations-area.md). */
export interface Session {
  session: string;
  expiresAt: string;
  readOnly: boolean;
  workspace: { id: string; name: string };
  member: { email: string; role: string };
}

/** Where the page keeps its session: this tab only, never a cookie, gone when the tab closes. */
const STORED = 'integrations-session';

export const SESSION_PATH = '/integrations/api/session';
export const GRAPHQL_PATH = '/integrations/api/graphql';

/** A session that ended (expired, revoked, the member's role gone) or a link that cannot be opened: the page says so and nothing else. */
export class Ended extends Error {}

/** What the API refused, with the field it names when it names one. */
export class Refusal extends Error {
  readonly code: string;
  readonly field: string | undefined;
  constructor(message: string, code: string, field?: string) {
    super(message);
    this.code = code;
    this.field = field;
  }
}

interface GraphQLAnswer<T> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: { code?: string; field?: string } }>;
}

async function bodyOf(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

function messageOf(body: unknown, fallback: string): string {
  const error = (body as { error?: { message?: unknown } } | null)?.error;
  return typeof error?.message === 'string' ? error.message : fallback;
}

/** The link's secret traded for a session; the link opens once. */
export async function openLink(secret: string): Promise<Session> {
  const response = await fetch(SESSION_PATH, { method: 'POST', headers: { 'Portal-Link': secret }, credentials: 'omit', cache: 'no-store' });
  const body = await bodyOf(response);
  if (response.status === 401) throw new Ended(messageOf(body, 'This link was already opened, has expired or was revoked. Ask for a new one.'));
  if (!response.ok) throw new Error(messageOf(body, `The service answered ${response.status}.`));
  const session = body as Session;
  sessionStorage.setItem(STORED, JSON.stringify(session));
  return session;
}

export function storedSession(): Session | null {
  const text = sessionStorage.getItem(STORED);
  if (text === null) return null;
  try {
    const session = JSON.parse(text) as Session;
    return typeof session.session === 'string' && Date.parse(session.expiresAt) > Date.now() ? session : null;
  } catch {
    return null;
  }
}

export function forgetSession(): void {
  sessionStorage.removeItem(STORED);
}

/** Runs one GraphQL document of the integrations area with the session's credential. */
export class Portal {
  readonly session: Session;
  private readonly onEnded: (message: string) => void;

  constructor(session: Session, onEnded: (message: string) => void) {
    this.session = session;
    this.onEnded = onEnded;
  }

  get readOnly(): boolean {
    return this.session.readOnly;
  }

  /** `workspaceId` and `member` are the session's: the server refuses any other. */
  async run<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const response = await fetch(GRAPHQL_PATH, {
      method: 'POST',
      credentials: 'omit',
      cache: 'no-store',
      headers: { Authorization: `Bearer ${this.session.session}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ query, variables: { workspaceId: this.session.workspace.id, member: this.session.member.email, ...variables } }),
    });
    const body = (await bodyOf(response)) as GraphQLAnswer<T> | null;
    const first = body?.errors?.[0];
    const code = first?.extensions?.code ?? '';
    if (response.status === 401 || code === 'SESSION_EXPIRED') {
      const message = first?.message ?? messageOf(body, 'This session has ended. Ask for a new link.');
      forgetSession();
      this.onEnded(message);
      throw new Ended(message);
    }
    if (response.status === 429) throw new Refusal(messageOf(body, first?.message ?? 'Too many requests: wait a moment and try again.'), 'RATE_LIMITED');
    if (first) throw new Refusal(first.message, code, first.extensions?.field);
    if (!response.ok || !body?.data) throw new Refusal(messageOf(body, `The service answered ${response.status}.`), 'UNAVAILABLE');
    return body.data;
  }
}
