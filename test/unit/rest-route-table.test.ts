import { describe, expect, it } from 'vitest';
import type { Step } from '../../rest/pipeline/compose.ts';
import { routeTable } from '../../rest/pipeline/route-table.ts';

/** Which declared route a method and raw URL reach, and the path parameter it carries, with no express and no socket. */
describe('the route table', () => {
  const step: Step = () => {};
  const resolve = routeTable([
    { name: '/api/public/v1/courses', path: '/api/public/v1/courses', methods: 'every', steps: [step] },
    { name: '/docs', path: '/docs', strict: true, methods: 'read', steps: [step] },
    { name: '/api/calendar/v1/{token}.ics', path: '/api/calendar/v1/', parameter: true, methods: 'every', steps: [step] },
  ]);
  it.each([
    ['GET', '/api/public/v1/courses', '/api/public/v1/courses', ''],
    ['POST', '/api/public/v1/courses/', '/api/public/v1/courses', ''],
    ['GET', '/api/public/v1/courses?x=1', '/api/public/v1/courses', ''],
    ['GET', '/api/public/v1/courses//', null, ''],
    ['GET', '/api/public/v1//courses', null, ''],
    ['GET', '/API/public/v1/courses', null, ''],
    ['GET', '/api/public/v1/cour%73es', null, ''],
    ['GET', '/docs', '/docs', ''],
    ['HEAD', '/docs', '/docs', ''],
    ['GET', '/docs/', null, ''],
    ['POST', '/docs', null, ''],
    ['GET', '/api/calendar/v1/a%2Eics.ics', '/api/calendar/v1/{token}.ics', 'a.ics.ics'],
    ['GET', '/api/calendar/v1/tok.ics/', '/api/calendar/v1/{token}.ics', 'tok.ics'],
    ['GET', '/api/calendar/v1/', null, ''],
    ['GET', '/api/calendar/v1/a/b.ics', null, ''],
  ])('%s %s is %s', (method, url, route, param) => {
    const match = resolve(method, url);
    expect(match?.route.name ?? null).toBe(route);
    if (match) expect(match.param).toBe(param);
  });

  it('answers a parameter that does not decode with 400 invalid_request, as express does', () => {
    expect(() => resolve('GET', '/api/calendar/v1/%zz.ics')).toThrow(expect.objectContaining({ code: 'invalid_request', status: 400 }));
  });
});
