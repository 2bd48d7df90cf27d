import type { RequestHandler } from 'express';
import { ApiError } from '../../src/errors.ts';

const MAX_NAME_LENGTH = 64;

function parameterName(pair: string): string {
  const raw = pair.split('=', 1)[0] ?? '';
  let name: string;
  try {
    name = decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    name = raw;
  }
  // The name is echoed to the client: no control characters, no secrets, bounded length.
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is replaced
  name = name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?').replace(/svc_(api|cal)_\w*/g, '[redacted]');
  return name.length > MAX_NAME_LENGTH ? `${name.slice(0, MAX_NAME_LENGTH)}…` : name;
}

/** The endpoints take no query parameters: any query string is 400 naming the parameter. */
export const rejectQueryString: RequestHandler = (req, _res, next) => {
  const index = req.originalUrl.indexOf('?');
  if (index === -1) return next();
  const query = req.originalUrl.slice(index + 1);
  const first = query.split('&').find((pair) => pair !== '');
  if (first === undefined) {
    return next(new ApiError('invalid_request', 'This endpoint takes no query string.'));
  }
  next(
    new ApiError(
      'invalid_request',
      `Query parameter ${JSON.stringify(parameterName(first))} is not accepted; this endpoint takes no query parameters.`,
    ),
  );
};
