import { describe, expect, it } from 'vitest';
import { frozenModel } from '../support/frozen-model.ts';
import { connectionOrder } from '../../src/sql/sql-builder.ts';
import { MAX_PAGE_SIZE, parseConnectionArguments } from '../../src/loaders/connection-arguments.ts';
import { decodeCursor, encodeCursor } from '../../src/loaders/cursor.ts';

const { registry } = frozenModel();
const bookings = registry.relation(registry.get('Workspace'), 'bookings');
const order = connectionOrder(registry, bookings);
const booking = registry.get('Booking');
const parse = (args: Record<string, unknown>) => parseConnectionArguments('Workspace.bookings', booking, order, args);

describe('connection arguments', () => {
  it('defaults to the first 100 rows', () => {
    expect(MAX_PAGE_SIZE).toBe(100);
    expect(parse({})).toEqual({ size: 100, backward: false, filter: [], filterValues: new Map() });
  });

  it('takes first or last from 1 to 100 and refuses 0, 101, fractions and both at once', () => {
    expect(parse({ first: 1 }).size).toBe(1);
    expect(parse({ last: 100 })).toMatchObject({ size: 100, backward: true });
    for (const [args, message] of [
      [{ first: 0 }, 'Argument "first" must be an integer from 1 to 100.'],
      [{ first: 101 }, 'Argument "first" must be an integer from 1 to 100.'],
      [{ first: 2.5 }, 'Argument "first" must be an integer from 1 to 100.'],
      [{ last: -1 }, 'Argument "last" must be an integer from 1 to 100.'],
      [{ first: 1, last: 1 }, 'Give "first" or "last", not both'],
    ] as const) {
      expect(() => parse(args), JSON.stringify(args)).toThrow(message);
      try {
        parse(args);
      } catch (error) {
        expect((error as { code: string }).code).toBe('invalid_request');
      }
    }
  });

  it('orders filter conditions by field then operator, whatever the order given, so one shape is one statement', () => {
    const parsed = parse({
      filter: { createdAt: { lt: new Date('2026-02-01T00:00:00Z'), gte: new Date('2026-01-01T00:00:00Z') }, status: { in: ['confirmed'] }, source: null },
    });
    expect(parsed.filter).toEqual([
      ['status', 'in'],
      ['createdAt', 'gte'],
      ['createdAt', 'lt'],
    ]);
    expect(Object.fromEntries(parsed.filterValues)).toEqual({
      'status.in': ['confirmed'],
      'createdAt.gte': '2026-01-01T00:00:00.000Z',
      'createdAt.lt': '2026-02-01T00:00:00.000Z',
    });
  });

  it('refuses an operator the field type does not have and a field the resource does not have', () => {
    expect(() => parse({ filter: { status: { gte: 'confirmed' } } })).toThrow('Argument "filter" cannot compare "status" with "gte".');
    expect(() => parse({ filter: { colour: { eq: 'red' } } })).toThrow('Argument "filter" has no field "colour".');
  });
});

describe('cursors', () => {
  const values = ['2026-01-01 00:00:00.000123', 'bkg_1'];

  it('carry the order values exactly, microseconds included, and read back only for their own list', () => {
    const cursor = encodeCursor('Workspace.bookings', values);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor('after', cursor, 'Workspace.bookings', order)).toEqual(values);
    expect(() => decodeCursor('after', cursor, 'CourseRun.bookings', order)).toThrow('Argument "after" is not a cursor of this list');
  });

  it('refuse any changed character, a wrong number or type of values, and what is not a cursor at all', () => {
    const cursor = encodeCursor('Workspace.bookings', values);
    for (let position = 0; position < cursor.length; position += 7) {
      const changed = cursor.slice(0, position) + (cursor[position] === 'A' ? 'B' : 'A') + cursor.slice(position + 1);
      expect(() => decodeCursor('before', changed, 'Workspace.bookings', order), `position ${position}`).toThrow('Argument "before" is not a cursor of this list');
    }
    for (const bad of [
      encodeCursor('Workspace.bookings', [values[0]]),
      encodeCursor('Workspace.bookings', ['2026-01-01T00:00:00Z', 'bkg_1']),
      encodeCursor('Workspace.bookings', [null, 'bkg_1']),
      encodeCursor('Workspace.bookings', ['2026-01-01 00:00:00', 7]),
      '',
      'a b',
      'x'.repeat(2000),
      42,
    ]) {
      expect(() => decodeCursor('after', bad, 'Workspace.bookings', order)).toThrow('Argument "after" is not a cursor of this list');
    }
  });
});
