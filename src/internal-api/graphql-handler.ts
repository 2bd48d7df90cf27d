import { HeaderMap, type ApolloServer, type BaseContext } from '@apollo/server';
import type { Request, RequestHandler, Response } from 'express';

/**
 * Apollo Server at an express route through its public `executeHTTPGraphQLRequest`, as
 * `@as-integrations/express5` does it, with less per request: the query string taken from the URL
 * without parsing it whole, and a complete answer written with `res.end` as the text Apollo Server
 * made (express's `res.send` turned each answer into a Buffer first, and its headers and body left
 * in two writes). The body is express.json's, which runs before.
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
        res.setHeader('Content-Length', Buffer.byteLength(text));
        if (req.method === 'HEAD') res.end();
        else res.end(text);
        return;
      }
      for await (const chunk of answer.body.asyncIterator) res.write(chunk);
      res.end();
    } catch (error) {
      next(error);
    }
  };
}
