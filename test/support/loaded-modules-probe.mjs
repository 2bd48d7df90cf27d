// Given to a child process with `node --import`: reports on stdout every OpenTelemetry package and
// module hook the process's ES modules import, as `loaded-module <url>` lines, so that a test can
// tell which of them a process loaded.
import { register } from 'node:module';

const hook = `
import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (/\\/node_modules\\/(@opentelemetry\\/[^/]+|import-in-the-middle)\\//.test(resolved.url)) writeSync(1, 'loaded-module ' + resolved.url + '\\n');
  return resolved;
}
`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
