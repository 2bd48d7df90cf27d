import { ApiError } from '../../src/errors.ts';
import type { Redactor } from '../../src/logger.ts';
import type { Step } from '../pipeline/compose.ts';

const MAX_NAME_LENGTH = 64;

function parameterName(pair: string, redactor: Redactor): string {
  const raw = pair.split('=', 1)[0] ?? '';
  let name: string;
  try {
    name = decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    name = raw;
  }
  // The name is echoed to the client: no control characters, no secrets (redacted as the logs
  // redact them, any kind and letter case), bounded length.
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is replaced
  name = redactor.text(name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?'));
  return name.length > MAX_NAME_LENGTH ? `${name.slice(0, MAX_NAME_LENGTH)}…` : name;
}

/** The endpoints take no query parameters: any query string is 400 naming the parameter (docs/contract-rules.md, http.no-query). */
export function noQueryString(redactor: Redactor): Step {
  return (state) => {
    if (!state.hasQuery) return;
    const url = state.req.originalUrl;
    const query = url.slice(url.indexOf('?') + 1);
    const first = query.split('&').find((pair) => pair !== '');
    if (first === undefined) throw new ApiError('invalid_request', 'This endpoint takes no query string.');
    throw new ApiError(
      'invalid_request',
      `Query parameter ${JSON.stringify(parameterName(first, redactor))} is not accepted; this endpoint takes no query parameters.`,
    );
  };
}
