import { Agent, request } from 'node:https';
import type { Socket } from 'node:net';
import { HttpsAgent } from 'agentkeepalive';
import { TargetRefusedError, assertLiteralHostAllowed, guardedLookup } from './target-guard.ts';

/** Why an attempt failed, as the delivery log and the metrics name it. */
export type FailureClass =
  | 'http_status'
  | 'gone'
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
  /** The start of the receiver's answer (at most ANSWER_START_BYTES), for an operator to read; never stored. */
  answerStart: string | null;
}

/** docs/contract-rules.md, webhooks.gone: the status with which a receiver says the subscription no longer exists. */
export const GONE = 410;

/** How much of a receiver's answer an attempt keeps for the operator who made it by hand. */
export const ANSWER_START_BYTES = 200;

/**
 * How much of an answer's body an attempt reads. Only the status counts; past this the connection
 * is closed rather than reused, so that a receiver sending a huge body costs neither the time to
 * read it nor more memory than this.
 */
export const ANSWER_READ_BYTES = 64 * 1024;

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

/** A pooled connection failed before any byte of the answer arrived: the receiver had closed it. */
class StaleConnection extends Error {
  constructor(cause: unknown) {
    super('a reused connection failed before the answer began', { cause });
    this.name = 'StaleConnection';
  }
}

interface Answer {
  status: number;
  start: string;
}

/**
 * How long a connection may wait idle in the pool for the next attempt. Many servers close idle
 * keep-alive connections after 5 s (Node's own among them); a connection reused at that moment
 * fails on the receiver's close, so the pool lets go of it well before.
 */
export const KEEP_ALIVE_IDLE_MS = 4_000;
/** Taken off a receiver's `Keep-Alive: timeout=N` hint, for the same reason. */
const KEEP_ALIVE_HINT_MARGIN_MS = 1_000;

/** The idle time allowed after an answer with this `Keep-Alive` header; 0 or less: do not reuse. */
export function idleLimit(keepAliveHeader: string | undefined): number {
  const seconds = /(?:^|[\s,;])timeout\s*=\s*(\d+)/i.exec(` ${keepAliveHeader ?? ''}`)?.[1];
  if (seconds === undefined) return KEEP_ALIVE_IDLE_MS;
  return Math.min(KEEP_ALIVE_IDLE_MS, Number(seconds) * 1000 - KEEP_ALIVE_HINT_MARGIN_MS);
}

/**
 * Sends one signed POST (docs/contract-rules.md, webhooks.failed-attempt): a failure is a network or TLS error, the timeout,
 * or any status outside 200–299; redirects are never followed (Node's https does not follow them,
 * and a 3xx is recorded as `redirect`). The timeout bounds the whole exchange, connection included.
 */
export class WebhookSender {
  /** Keep-alive pool: idle connections are closed after KEEP_ALIVE_IDLE_MS, or sooner when the receiver says so. */
  readonly #agent: Agent;
  /** One connection per request: the single retry after a reused connection turned out closed. */
  readonly #freshAgent: Agent;
  readonly #options: SenderOptions;

  constructor(options: SenderOptions) {
    this.#options = options;
    const common = {
      lookup: guardedLookup(options.allowPrivateTargets),
      // Only when given: an explicit `ca` would replace the default store, NODE_EXTRA_CA_CERTS included.
      ...(options.trustedCertificates?.length ? { ca: options.trustedCertificates } : {}),
    };
    this.#agent = new HttpsAgent({
      ...common,
      keepAlive: true,
      maxSockets: 64,
      freeSocketTimeout: KEEP_ALIVE_IDLE_MS,
      // The attempt's own timer bounds an exchange; the agent's socket timeout must not fire first.
      timeout: options.timeoutMs + 1_000,
    });
    this.#freshAgent = new Agent({ ...common, keepAlive: false });
  }

  /** `signal` cuts an attempt short when the worker shuts down: it is then not recorded at all. */
  async send(url: string, headers: Record<string, string>, body: string, signal?: AbortSignal): Promise<AttemptOutcome> {
    const started = performance.now();
    const done = (ok: boolean, httpStatus: number | null, error: FailureClass | null, answerStart: string | null = null): AttemptOutcome => ({
      ok,
      httpStatus,
      error,
      durationMs: Math.round(performance.now() - started),
      answerStart,
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
      const deadline = started + this.#options.timeoutMs;
      let answer: Answer;
      try {
        answer = await this.#post(target, headers, body, signal, deadline, this.#agent);
      } catch (error) {
        // The receiver closed a pooled connection as it was reused: the request never reached it,
        // so it goes once more, on a connection of its own, within the same attempt and timeout.
        if (!(error instanceof StaleConnection) || signal?.aborted) throw error;
        answer = await this.#post(target, headers, body, signal, deadline, this.#freshAgent);
      }
      const { status, start } = answer;
      if (status >= 200 && status <= 299) return done(true, status, null, start);
      return done(false, status, status >= 300 && status <= 399 ? 'redirect' : status === GONE ? 'gone' : 'http_status', start);
    } catch (error) {
      if (signal?.aborted) throw error;
      return done(false, null, classifyError(error instanceof StaleConnection ? error.cause : error));
    }
  }

  #post(target: URL, headers: Record<string, string>, body: string, signal: AbortSignal | undefined, deadline: number, agent: Agent): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const payload = Buffer.from(body, 'utf8');
      const req = request(target, {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': 'course-booking-webhooks/1' },
        ...(signal ? { signal } : {}),
      });
      let timedOut = false;
      let answerBegan = false;
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new AttemptTimeout(this.#options.timeoutMs));
      }, Math.max(0, deadline - performance.now()));
      const fail = (error: Error) => {
        clearTimeout(timer);
        if (timedOut) return reject(new AttemptTimeout(this.#options.timeoutMs));
        reject(req.reusedSocket && !answerBegan && agent === this.#agent ? new StaleConnection(error) : error);
      };
      req.on('socket', (socket: Socket) => socket.once('data', () => (answerBegan = true)));
      req.on('error', fail);
      req.on('response', (res) => {
        answerBegan = true;
        // docs/webhooks.md: a receiver's `Keep-Alive: timeout=N` shortens how long the connection
        // waits for reuse; one that allows a second or less is not reused at all.
        const socket = res.socket as (Socket & { freeSocketTimeout?: number }) | null;
        const hint = res.headers['keep-alive'];
        const limit = idleLimit(Array.isArray(hint) ? hint.join(',') : hint);
        if (socket && limit > 0) socket.freeSocketTimeout = limit;
        // The answer's body is read (so that the connection can be reused) and dropped but its start.
        const start: Buffer[] = [];
        let kept = 0;
        let read = 0;
        const answered = () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, start: Buffer.concat(start).toString('utf8') });
        };
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > ANSWER_READ_BYTES) {
            answered();
            return void res.destroy();
          }
          if (kept >= ANSWER_START_BYTES) return;
          start.push(chunk.subarray(0, ANSWER_START_BYTES - kept));
          kept += Math.min(chunk.length, ANSWER_START_BYTES - kept);
        });
        res.on('end', () => {
          if (socket && limit <= 0) socket.destroy();
          answered();
        });
        res.on('error', fail);
        res.on('aborted', () => fail(new Error('the answer was cut off')));
      });
      req.end(payload);
    });
  }

  close(): void {
    this.#agent.destroy();
    this.#freshAgent.destroy();
  }
}
