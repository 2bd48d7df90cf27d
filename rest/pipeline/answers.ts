import type { ApiError } from '../../src/errors.ts';
import { errorAnswer } from '../../src/http-answers.ts';
import type { RequestState } from './request-state.ts';

/** The body is turned into bytes in pieces of about this many characters. */
const PIECE = 64 * 1024;

/**
 * The bytes of `{"data":[…]}`, exactly those of `JSON.stringify({ data: items.map(toJson) })`, in
 * pieces. The body is built one item at a time and each item is let go once written into the text,
 * so a large list (/courses of a big workspace) never exists at once as the operation's result,
 * mapped objects, one whole string and a byte copy of that string.
 */
export function listBody<T>(items: Array<T | null>, toJson: (item: T) => unknown): Buffer[] {
  const pieces: Buffer[] = [];
  let text = '{"data":[';
  for (let i = 0; i < items.length; i += 1) {
    text += (i === 0 ? '' : ',') + JSON.stringify(toJson(items[i]!));
    items[i] = null;
    if (text.length >= PIECE) {
      pieces.push(Buffer.from(text, 'utf8'));
      text = '';
    }
  }
  pieces.push(Buffer.from(`${text}]}`, 'utf8'));
  return pieces;
}

/**
 * A body larger than this is handed to the socket a slice at a time, the next slice on a later
 * turn of the event loop (once the socket took the last): one write of a whole large answer (a
 * /courses of tens of MB) would hold the event loop while the kernel copies megabytes, and every
 * other request with it.
 */
const SEND_SLICE = 256 * 1024;

/**
 * Answers with a body given as its bytes (built now or cached): the status and every header (the
 * request's own, then `headers`, `Content-Type` and `Content-Length`) in one call, then the pieces,
 * in one write to the socket up to `SEND_SLICE` bytes, else in slices of about that size. HEAD
 * gets the headers alone.
 */
export function sendBytes(state: RequestState, status: number, contentType: string, pieces: readonly Buffer[], length: number, headers: readonly string[] = []): void {
  const { res } = state;
  const all = state.headers;
  for (let i = 0; i < headers.length; i += 1) all.push(headers[i]!);
  all.push('Content-Type', contentType, 'Content-Length', String(length));
  res.writeHead(status, all);
  if (state.req.method === 'HEAD' || pieces.length === 0) {
    res.end();
    return;
  }
  if (length > SEND_SLICE) return writeSlices(res, pieces, 0, 0);
  if (pieces.length === 1) {
    res.end(pieces[0]);
    return;
  }
  res.cork();
  for (let i = 0; i < pieces.length - 1; i += 1) res.write(pieces[i]);
  res.end(pieces[pieces.length - 1]);
  res.uncork();
}

/**
 * Writes the body from byte `offset` of `pieces[at]` on: a slice of `SEND_SLICE` bytes now (a piece
 * that crosses its end is split), the next once the socket has taken it, or on the next turn if it
 * took it at once. Stops when the response is gone (the client left).
 */
function writeSlices(res: RequestState['res'], pieces: readonly Buffer[], at: number, offset: number): void {
  if (res.destroyed) return;
  let bytes = 0;
  res.cork();
  while (bytes < SEND_SLICE) {
    const piece = pieces[at]!;
    const take = Math.min(piece.length - offset, SEND_SLICE - bytes);
    const part = offset === 0 && take === piece.length ? piece : piece.subarray(offset, offset + take);
    bytes += take;
    if (offset + take === piece.length) {
      at += 1;
      offset = 0;
    } else offset += take;
    if (at === pieces.length) {
      res.end(part);
      res.uncork();
      return;
    }
    res.write(part);
  }
  res.uncork();
  if (res.writableNeedDrain) res.once('drain', () => writeSlices(res, pieces, at, offset));
  else setImmediate(() => writeSlices(res, pieces, at, offset));
}

/** A text body, as `sendBytes` sends bytes. */
export function sendText(state: RequestState, status: number, contentType: string, text: string, headers: readonly string[] = []): void {
  const body = Buffer.from(text, 'utf8');
  sendBytes(state, status, contentType, [body], body.length, headers);
}

/** `304 Not Modified`: the request's headers and `headers` (the validator), no body. */
export function sendNotModified(state: RequestState, headers: readonly string[]): void {
  for (let i = 0; i < headers.length; i += 1) state.headers.push(headers[i]!);
  state.res.writeHead(304, state.headers);
  state.res.end();
}

/** Sets the request's headers one by one, for an answer another function writes (a file sent by express). */
export function setRequestHeaders(state: RequestState): void {
  for (let i = 0; i < state.headers.length; i += 2) state.res.setHeader(state.headers[i]!, state.headers[i + 1]!);
}

/**
 * Every error leaves in the contract's shape (`{ "error": { "code", "message" } }`, the one
 * catalogue's answer, src/http-answers.ts) with the request's headers; an answer already under
 * way is cut off instead.
 */
export function sendError(state: RequestState, error: ApiError): void {
  if (state.res.headersSent) {
    state.res.destroy();
    return;
  }
  const answer = errorAnswer(error, state.errorShape);
  const headers: string[] = [];
  for (const [name, value] of Object.entries(answer.headers)) {
    if (name !== 'Content-Type') headers.push(name, value);
  }
  sendText(state, answer.status, answer.headers['Content-Type']!, answer.body, headers);
}
