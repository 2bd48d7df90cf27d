import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spec } from '../support/openapi.ts';

const CHANGELOG = readFileSync(new URL('../../CHANGELOG.md', import.meta.url), 'utf8');
const headings = [...CHANGELOG.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((match) => ({ version: match[1]!, date: match[2] }));

describe('CHANGELOG.md', () => {
  it('versioning.changelog: keeps an [Unreleased] section above the releases', () => {
    expect(headings[0]).toEqual({ version: 'Unreleased', date: undefined });
  });

  it('versioning.changelog: each section holds each kind of change once, of the kinds Keep a Changelog names (Added, Changed, Deprecated, Removed, Fixed, Security)', () => {
    const ORDER = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];
    for (const section of CHANGELOG.split(/^## /m).slice(1)) {
      const kinds = [...section.matchAll(/^### (.+)$/gm)].map((match) => match[1]!);
      const name = section.slice(0, section.indexOf('\n'));
      expect(new Set(kinds).size, `${name}: ${kinds.join(', ')}`).toBe(kinds.length);
      for (const kind of kinds) expect(ORDER, `${name}: ${kind}`).toContain(kind);
    }
  });

  it('versioning.changelog: names as its newest release the version openapi/public-v1.yaml declares, with a date', () => {
    const newest = headings[1];
    expect(newest?.version).toBe((spec.info as { version: string }).version);
    expect(newest?.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('versioning.first-release: the first release lists bearer keys, the three scopes, both endpoints, the error shape, the limits, the calendar feed, the webhook and the separate widget API', () => {
    // Line breaks in the Markdown do not matter.
    const first = CHANGELOG.slice(CHANGELOG.lastIndexOf('\n## [')).replace(/\s+/g, ' ');
    for (const item of [
      'Bearer API keys',
      '`courses:read`',
      '`bookings:read`',
      '`participants:read`',
      '/api/public/v1/courses',
      '/api/public/v1/bookings',
      '{ "error": { "code", "message" } }',
      '120 requests per 60 seconds per API key',
      'at most 100 bookings per response',
      '/api/calendar/v1/{token}.ics',
      '`booking.created`',
      '`x-svc-signature`',
      'HTTPS',
      'at most 8 attempts',
      '/api/widget/v1/',
    ]) {
      expect(first, item).toContain(item);
    }
  });
});
