import type { Request, Response } from 'express';
import { JSON_CONTENT_TYPE } from './send-error.ts';

/** The body is turned into bytes in pieces of about this many characters. */
const PIECE = 64 * 1024;

/**
 * Answers `{"data":[…]}` with exactly the bytes of `JSON.stringify({ data: items.map(toJson) })`
 * and the headers `res.send` would give it, Content-Length included. The body is built one item
 * at a time and each item is let go once written into the text, so a large list (/courses of a
 * big workspace) never exists at once as the operation's result, mapped objects, one whole string
 * and a byte copy of that string.
 */
export function sendList<T>(req: Request, res: Response, items: Array<T | null>, toJson: (item: T) => unknown): void {
  const pieces: Buffer[] = [];
  let length = 0;
  let text = '{"data":[';
  for (let i = 0; i < items.length; i += 1) {
    text += (i === 0 ? '' : ',') + JSON.stringify(toJson(items[i]!));
    items[i] = null;
    if (text.length >= PIECE) {
      const piece = Buffer.from(text, 'utf8');
      pieces.push(piece);
      length += piece.length;
      text = '';
    }
  }
  const last = Buffer.from(`${text}]}`, 'utf8');
  pieces.push(last);
  length += last.length;

  res.set('Cache-Control', 'private, no-store');
  res.type(JSON_CONTENT_TYPE);
  res.set('Content-Length', String(length));
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  for (let i = 0; i < pieces.length - 1; i += 1) res.write(pieces[i]);
  res.end(last);
}
