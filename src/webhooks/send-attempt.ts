import { Agent, request } from 'node:https';
import { TargetRefusedError, assertLiteralHostAllowed, guardedLookup } from './target-guard.ts';

/** Why an attempt failed, as the delivery log and the metrics name it. */
export type FailureClass =
  | 'http_status'
  | 'redirect'
  | 'timeout'
  | 'tls'
  | 'dns'
  | 'connection_refused'
  | 'network'
  | 'refused_target'
  | 'insecure_url';

export interface AttemptOutcome {
  ok: boolean;
  httpStatus: number | null;
  error: FailureClass | null;
  durationMs: number;
}

export interface SenderOptions {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  /** Extra trusted certificates (PEM) for this process only; NODE_EXTRA_CA_CERTS is the operator's way. */
  trustedCertificates?: string[] | undefined;
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/;

export function classifyError(error: unknown): FailureClass {
  if (error instanceof TargetRefusedError) return 'refused_target';
  if (error instanceof AttemptTimeout) return 'timeout';
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (TLS_CODES.test(code) || /SSL|TLS|certificate/i.test((error as Error).message ?? '')) return 'tls';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'dns';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  return 'network';
}

class AttemptTimeout extends Error {
  constructor(ms: number) {
    super(`no complete answer within ${ms} ms`);
    this.name = 'AttemptTimeout';
  }
}

/**
 * Sends one signed POST. decisions (webhooks): a failure is a network or TLS error, the timeout,
 * or any status outside 200–299; redirects are never followed (Node's https does not follow them,
 * and a 3xx is recorded as `redirect`). The timeout bounds the whole exchange, connection included.
 */
export class WebhookSender {
  readonly #agent: Agent;
  readonly #options: SenderOptions;

  constructor(options: SenderOptions) {
    this.#options = options;
    this.#agent = new Agent({
      keepAlive: true,
      maxSockets: 64,
      lookup: guardedLookup(options.allowPrivateTargets),
      // Only when given: an explicit `ca` would replace the default store, NODE_EXTRA_CA_CERTS included.
      ...(options.trustedCertificates?.length ? { ca: options.trustedCertificates } : {}),
    });
  }

  /** `signal` cuts an attempt short when the worker shuts down: it is then not recorded at all. */
  async send(url: string, headers: Record<string, string>, body: string, signal?: AbortSignal): Promise<AttemptOutcome> {
    const started = performance.now();
    const done = (ok: boolean, httpStatus: number | null, error: FailureClass | null): AttemptOutcome => ({
      ok,
      httpStatus,
      error,
      durationMs: Math.round(performance.now() - started),
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return done(false, null, 'insecure_url');
    }
    if (target.protocol !== 'https:') return done(false, null, 'insecure_url');
    try {
      assertLiteralHostAllowed(target, this.#options.allowPrivateTargets);
      const status = await this.#post(target, headers, body, signal);
      if (status >= 200 && status <= 299) return done(true, status, null);
      return done(false, status, status >= 300 && status <= 399 ? 'redirect' : 'http_status');
    } catch (error) {
      if (signal?.aborted) throw error;
      return done(false, null, classifyError(error));
    }
  }

  #post(target: URL, headers: Record<string, string>, body: string, signal: AbortSignal | undefined): Promise<number> {
    return new Promise((resolve, reject) => {
      const payload = Buffer.from(body, 'utf8');
      const req = request(target, {
        method: 'POST',
        agent: this.#agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': 'course-booking-webhooks/1' },
        ...(signal ? { signal } : {}),
      });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new AttemptTimeout(this.#options.timeoutMs));
      }, this.#options.timeoutMs);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(timedOut ? new AttemptTimeout(this.#options.timeoutMs) : error);
      };
      req.on('error', fail);
      req.on('response', (res) => {
        // The answer's body is read and dropped, so that the connection can be reused.
        res.resume();
        res.on('end', () => {
          clearTimeout(timer);
          resolve(res.statusCode ?? 0);
        });
        res.on('error', fail);
        res.on('aborted', () => fail(new Error('the answer was cut off')));
      });
      req.end(payload);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
