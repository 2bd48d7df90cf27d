import { SpanKind, SpanStatusCode, type Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Redactor } from '../logger.ts';

const REDACTED = '[redacted]';

/** Attributes that hold a request's path (and query), in the old and the stable HTTP conventions. */
const TARGET_ATTRIBUTES = ['http.target', 'url.path'] as const;
const QUERY_ATTRIBUTES = ['url.query'] as const;
const FULL_URL_ATTRIBUTES = ['http.url', 'url.full'] as const;
/** Where a client's address is recorded; the logs never record it, so neither do traces. */
const CLIENT_ADDRESS_ATTRIBUTES = ['client.address', 'http.client_ip', 'net.peer.ip', 'network.peer.address', 'net.sock.peer.addr'] as const;

/**
 * Removes from every span, just before it ends and is handed to the exporter, what the logs never
 * show: secrets in request paths and queries (a calendar feed's token, a key pasted into a URL, the
 * internal tokens) are replaced by the logs' own `Redactor`, in every URL attribute, the span's name
 * and its status message; client addresses are replaced; an outgoing request (a webhook) keeps only
 * its target's origin, as a receiver's URL may hold a secret of the receiver's.
 */
export class RedactingSpanProcessor implements SpanProcessor {
  readonly #redactor: Redactor;

  constructor(redactor: Redactor) {
    this.#redactor = redactor;
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnding(span: Span): void {
    const client = span.kind === SpanKind.CLIENT;
    const text = (value: string) => this.#redactor.text(value);
    const replace = (keys: readonly string[], redact: (value: string) => string) => {
      for (const key of keys) {
        const value = span.attributes[key];
        if (typeof value === 'string') span.setAttribute(key, redact(value));
      }
    };
    replace(TARGET_ATTRIBUTES, client ? () => REDACTED : (value) => this.#target(value));
    replace(QUERY_ATTRIBUTES, client ? () => REDACTED : text);
    replace(FULL_URL_ATTRIBUTES, client ? (value) => originOf(value) : (value) => this.#fullUrl(value));
    if (span.kind === SpanKind.SERVER) replace(CLIENT_ADDRESS_ATTRIBUTES, () => REDACTED);
    span.updateName(text(span.name));
    if (span.status.code === SpanStatusCode.ERROR && span.status.message) span.setStatus({ code: SpanStatusCode.ERROR, message: text(span.status.message) });
  }

  onEnd(_span: ReadableSpan): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }

  /** A request target (path and query) as the request log writes it. */
  #target(target: string): string {
    const { path, query } = this.#redactor.url(target);
    return query === null ? path : `${path}?${query}`;
  }

  /** The origin without credentials, then the path and query as the request log writes them. */
  #fullUrl(value: string): string {
    const origin = originOf(value);
    const target = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(.*)$/is.exec(value)?.[1];
    return origin === REDACTED || target === undefined ? REDACTED : `${origin}${this.#target(target)}`;
  }
}

/** `scheme://host:port` of a URL; nothing at all when it does not parse. */
function originOf(value: string): string {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? REDACTED : origin;
  } catch {
    return REDACTED;
  }
}
