import { parseDuration as parseLifetime, parseInstant, type PolicyLabels } from '../auth/key-policy.ts';
import { InputError } from '../input-error.ts';

/**
 * How a way in names the inputs of the operations: the CLI by its options, GraphQL and the page by
 * their fields. The messages are written once, in the validators, with the caller's label.
 */
export interface Labels extends PolicyLabels {
  id: string;
  name: string;
  scopes: string;
  since: string;
  status: string;
  limit: string;
  days: string;
  url: string;
  events: string;
  type: string;
  overlap: string;
  neverExpires: string;
  ttl: string;
  readOnly: string;
}

const CLI_LABELS: Labels = {
  id: '--id',
  name: '--name',
  scopes: '--scopes',
  expiresIn: '--expires-in',
  expiresAt: '--expires-at',
  allowedIps: '--allow-ip',
  anyAddress: '--allow-any-ip',
  since: '--since',
  status: '--status',
  limit: '--limit',
  days: '--days',
  url: '--url',
  events: '--events',
  type: '--type',
  overlap: '--overlap',
  neverExpires: '--no-expiry',
  ttl: '--ttl',
  readOnly: '--read-only',
};

const FIELD_LABELS: Labels = {
  id: 'id',
  name: 'name',
  scopes: 'scopes',
  expiresIn: 'expiresIn',
  expiresAt: 'expiresAt',
  allowedIps: 'allowedIps',
  anyAddress: 'allowedIps: null',
  since: 'since',
  status: 'status',
  limit: 'limit',
  days: 'days',
  url: 'url',
  events: 'events',
  type: 'type',
  overlap: 'overlap',
  neverExpires: 'neverExpires',
  ttl: 'ttl',
  readOnly: 'readOnly',
};

/** The CLI's labels, or the fields' (GraphQL, the page); `overrides` for a command that names an input otherwise. */
export function labelsFor(cli: boolean, overrides: Partial<Labels> = {}): Labels {
  return { ...(cli ? CLI_LABELS : FIELD_LABELS), ...overrides };
}

/** A whole number from 1 to `max`, given as text (CLI) or as a number (GraphQL). */
export function wholeNumber(label: string, given: string | number, max: number): number {
  const text = String(given);
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw new InputError(`${label} ${JSON.stringify(text)} is not a whole number from 1 to ${max}`, { field: label });
  }
  return Number(text);
}

/** `429` is that status alone, `4xx` its class. */
export function statusRange(label: string, text: string): { from: number; to: number } {
  const match = /^\s*([1-5])(xx|\d\d)\s*$/i.exec(text);
  if (!match) throw new InputError(`${label} ${JSON.stringify(text)} is not a status (429) or a class (4xx)`, { field: label });
  if (match[2]!.toLowerCase() === 'xx') return { from: Number(match[1]) * 100, to: Number(match[1]) * 100 + 99 };
  const status = Number(`${match[1]}${match[2]}`);
  return { from: status, to: status };
}

/** A key log's `since`: an ISO 8601 time, or a duration back from now (`2h`). */
export function sinceOf(label: string, text: string): Date {
  if (/^\s*\d+\s*[mhdw]\s*$/.test(text)) return new Date(Date.now() - parseLifetime(label, text));
  return parseInstant(label, text);
}

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/** An ISO 8601 date or date-time with its offset (a bare date is midnight UTC), not in the future; no day past its month's end. */
export function pastTime(label: string, text: string): Date {
  const value = text.trim();
  const match = ISO_TIME.exec(value);
  const [year, month, day] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0];
  const realDay = match !== null && month >= 1 && month <= 12 && day >= 1 && new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
  const parsed = realDay ? new Date(value) : null;
  if (!parsed || Number.isNaN(parsed.getTime())) {
    throw new InputError(`${label} ${JSON.stringify(text)} is not an ISO 8601 time with its offset, e.g. 2026-11-20T08:00:00Z`, { field: label });
  }
  if (parsed.getTime() > Date.now()) throw new InputError(`${label} ${parsed.toISOString()} is in the future`, { field: label });
  return parsed;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The longest overlap of a secret rotation: the old secret signs at most this long. */
export const MAX_OVERLAP_MS = 7 * 86_400_000;

/** A secret rotation's overlap: `0`, or a whole number with a unit (500ms, 30s, 90m, 24h, 2d), at most 7d. */
export function overlapOf(label: string, text: string): number {
  const match = /^\s*(\d{1,9})\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match || (match[2] === undefined && match[1] !== '0')) {
    throw new InputError(`${label} ${JSON.stringify(text)} is not a duration such as 24h, 90m, 30s or 2d (or 0)`, { field: label });
  }
  const ms = Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!;
  if (ms > MAX_OVERLAP_MS) throw new InputError(`${label} must be at most ${MAX_OVERLAP_MS / 86_400_000}d`, { field: label });
  return ms;
}
