import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Secrets never reach a log line: Authorization headers are redacted and
 * request paths and queries are logged through a `Redactor`.
 */
export function createLogger(level: LoggerOptions['level'] = 'info', destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: undefined,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.authorization', 'key', 'secret', 'token'],
      censor: '[redacted]',
    },
  };
  // Pino's own default destination (standard output, written synchronously), kept so that lines
  // serialised by their caller reach the same stream (`infoLines`).
  const stream = destination ?? pino.destination(1);
  const logger = pino(options, stream);
  destinations.set(logger, stream);
  return logger;
}

const destinations = new WeakMap<Logger, pino.DestinationStream>();

/**
 * Writes info lines whose fields the caller serialised itself, in the very format pino writes
 * (`{"level":30,"time":…,<fields>,"msg":…}`), to the logger's own destination: for a line written
 * on every request, whose parts are known in advance and need neither pino's generic serialiser
 * nor its redaction (the caller passes only values that cannot hold a secret, or redacted ones).
 * The lines of one turn of the event loop leave in one write at its end: under load one system
 * call carries many requests' lines, and no line waits longer than the turn it was written in.
 * Null when the logger drops info lines. A logger this module did not create gets its lines
 * through pino itself.
 */
export function infoLines(logger: Logger, msg: string): ((fields: string) => void) | null {
  if (!logger.isLevelEnabled('info')) return null;
  const stream = destinations.get(logger);
  const end = `,"msg":${JSON.stringify(msg)}}\n`;
  if (!stream) return (fields) => logger.info(JSON.parse(`{${fields}}`) as object, msg);
  let pending = '';
  const flush = () => {
    const lines = pending;
    pending = '';
    stream.write(lines);
  };
  return (fields) => {
    if (pending === '') setImmediate(flush);
    pending += `{"level":30,"time":${Date.now()},${fields}${end}`;
  };
}

/** Percent-escapes decoded as UTF-8, never throwing on a malformed one (it becomes U+FFFD). */
function decodePercentOnce(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'));
}

/** Decoded until nothing changes, so that `%2573vc_cal_` is read as `svc_cal_` too. */
export function decodeForLog(text: string): string {
  let current = text;
  for (let round = 0; round < 10 && current.includes('%'); round += 1) {
    const next = decodePercentOnce(current);
    if (next === current) break;
    current = next;
  }
  return current;
}

const REDACTED = '[redacted]';
/**
 * Every secret kind the service issues, by its prefix, in any letter case: API keys, feed tokens,
 * internal tokens, the integrations page's links and sessions, webhook secrets.
 */
const PREFIXED_SECRET = /(svc_api_|svc_cal_|svc_int_|svc_pl_|svc_ps_|whsec_)[0-9A-Za-z+/=_-]*/gi;
const SECRET_PREFIX = /svc_api_|svc_cal_|svc_int_|svc_pl_|svc_ps_|whsec_/i;
/** A calendar path's last part is a feed token, whatever it looks like (a mistyped one is nearly a secret too). */
const FEED_SEGMENT = /(\/calendar\/+v1\/+)([^/?#]*)/gi;
/** Key material without its prefix: no path or query of the API legitimately holds such a run. */
const LONG_RUN = /[0-9A-Za-z]{32,}/g;
/** Logged paths and queries are cut to this length after redaction. */
const MAX_LOGGED_LENGTH = 512;

export interface Redactor {
  /** A request target's path and query, decoded, with every secret replaced; the query null when absent. */
  url(target: string): { path: string; query: string | null };
  /** Any text taken from a request (a query parameter's name echoed in an error), decoded, with every secret replaced. */
  text(raw: string): string;
  /** Whether a header value that would be logged (X-Request-Id) holds a secret. */
  holdsSecret(value: string): boolean;
}

/**
 * Secrets never reach a log line, however a URL is written: paths and queries are percent-decoded
 * (repeatedly) before anything is matched, the match ignores letter case, and besides the secrets
 * recognised by their prefix, `secrets` (the internal and metrics tokens) are removed by value.
 */
export function createRedactor(secrets: ReadonlyArray<string | undefined> = []): Redactor {
  const known = secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length > 0);
  const removeKnown = (text: string) => known.reduce((current, secret) => current.split(secret).join(REDACTED), text);
  const clean = (raw: string) => {
    const text = removeKnown(decodeForLog(raw))
      .replace(PREFIXED_SECRET, `$1${REDACTED}`)
      .replace(FEED_SEGMENT, (_segment, path: string, file: string) => `${path}${REDACTED}${/\.ics$/i.test(file) ? '.ics' : ''}`)
      .replace(LONG_RUN, REDACTED);
    return text.length > MAX_LOGGED_LENGTH ? `${text.slice(0, MAX_LOGGED_LENGTH)}…` : text;
  };
  return {
    text: clean,
    url(target) {
      const mark = target.indexOf('?');
      return mark === -1 ? { path: clean(target), query: null } : { path: clean(target.slice(0, mark)), query: clean(target.slice(mark + 1)) };
    },
    holdsSecret(value) {
      const decoded = decodeForLog(value);
      return SECRET_PREFIX.test(decoded) || known.some((secret) => decoded.includes(secret));
    },
  };
}
