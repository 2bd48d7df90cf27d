import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Secrets never reach a log line: Authorization headers are redacted and
 * calendar paths carry a feed token, so request paths are logged through `redactPath`.
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
  return destination ? pino(options, destination) : pino(options);
}

const FEED_PATH = /^(\/api\/calendar\/v1\/)[^/?#]*/;

/** The calendar feed path carries a secret token: it never appears in a log line. */
export function redactPath(path: string): string {
  return path.replace(FEED_PATH, '$1[redacted].ics').replace(/svc_(api|cal)_[0-9A-Za-z]+/g, 'svc_$1_[redacted]');
}
