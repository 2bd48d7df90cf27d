import type { Request, Response } from 'express';
import { JSON_CONTENT_TYPE } from '../src/http-answers.ts';

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
 * Answers with a list body given as its bytes (built now or cached) and the headers `res.send`
 * would give it, Content-Length included; HEAD gets the headers alone.
 */
export function sendListBody(req: Request, res: Response, pieces: readonly Buffer[], length: number): void {
  // docs/contract-rules.md, http.cache-control: answers are never stored by clients or proxies.
  res.set('Cache-Control', 'private, no-store');
  res.type(JSON_CONTENT_TYPE);
  res.set('Content-Length', String(length));
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  // Headers and pieces leave in one write to the socket, not one per piece.
  res.cork();
  for (let i = 0; i < pieces.length - 1; i += 1) res.write(pieces[i]);
  res.end(pieces[pieces.length - 1]);
  res.uncork();
}
