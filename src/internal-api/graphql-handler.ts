import { HeaderMap, type ApolloServer, type BaseContext } from '@apollo/server';
import type { Request, RequestHandler, Response } from 'express';

const NEWLINE = 0x0a;

/**
 * The text of a complete answer, as Apollo Server's `stringifyResult`: its JSON alone, the newline
 * Apollo Server's own stringifier ends it with added by `graphqlHandler` as it writes the answer.
 * (Added to the JSON text, the newline made a string of two parts that was copied whole twice
 * before it reached the socket: once to count its bytes, once more behind the headers.)
 */
export const stringifyResult = (value: unknown): string => JSON.stringify(value);

/**
 * Apollo Server at an express route through its public `executeHTTPGraphQLRequest`, as
 * `@as-integrations/express5` does it, with less per request: the query string taken from the URL
 * without parsing it whole, and a complete answer (made by `stringifyResult`) written with `res.end`
 * as one Buffer of its text and newline, sent with the headers in one write (express's `res.send`
 * left them in two). The body is express.json's, which runs before.
 */
export function graphqlHandler<TContext extends BaseContext>(server: ApolloServer<TContext>, context: (req: Request, res: Response) => Promise<TContext>): RequestHandler {
  server.assertStarted('graphqlHandler()');
  return async (req, res, next) => {
    try {
      const headers = new HeaderMap();
      for (const key in req.headers) {
        const value = req.headers[key];
        if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
      }
      const query = req.url.indexOf('?');
      const answer = await server.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method: req.method.toUpperCase(), headers, search: query === -1 ? '' : req.url.slice(query), body: req.body as unknown },
        context: () => context(req, res),
      });
      for (const [key, value] of answer.headers) res.setHeader(key, value);
      res.statusCode = answer.status ?? 200;
      if (answer.body.kind === 'complete') {
        const text = answer.body.string;
        const length = Buffer.byteLength(text);
        res.setHeader('Content-Length', length + 1);
        if (req.method === 'HEAD') {
          res.end();
          return;
        }
        const body = Buffer.allocUnsafe(length + 1);
        body.write(text, 0, length, 'utf8');
        body[length] = NEWLINE;
        res.end(body);
        return;
      }
      for await (const chunk of answer.body.asyncIterator) res.write(chunk);
      res.end();
    } catch (error) {
      next(error);
    }
  };
}
