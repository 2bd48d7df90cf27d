import { describe, expect, it } from 'vitest';
import { isoFromUtcText, utcTextColumn } from '../../src/sql/timestamps.ts';

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

/** A small deterministic generator (mulberry32), so a failure names a value that can be replayed. */
function random(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number): number => (month === 2 ? (isLeap(year) ? 29 : 28) : [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!);

/** What Date.prototype.toISOString writes for the instant, its microseconds truncated to milliseconds. */
function isoOf(year: number, month: number, day: number, hour: number, minute: number, second: number, microseconds: number): string {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Math.floor(microseconds / 1000));
  return date.toISOString();
}

describe('isoFromUtcText', () => {
  it('writes whole seconds with .000 milliseconds and a Z', () => {
    expect(isoFromUtcText('2025-03-04 05:06:07')).toBe('2025-03-04T05:06:07.000Z');
    expect(isoFromUtcText('2025-12-31 00:00:00')).toBe('2025-12-31T00:00:00.000Z');
  });

  it('pads one or two fractional digits to milliseconds', () => {
    expect(isoFromUtcText('2025-03-04 05:06:07.5')).toBe('2025-03-04T05:06:07.500Z');
    expect(isoFromUtcText('2025-03-04 05:06:07.05')).toBe('2025-03-04T05:06:07.050Z');
    expect(isoFromUtcText('2025-03-04 05:06:07.12')).toBe('2025-03-04T05:06:07.120Z');
  });

  it('keeps three fractional digits and truncates four to six, never rounding up', () => {
    expect(isoFromUtcText('2025-03-04 05:06:07.123')).toBe('2025-03-04T05:06:07.123Z');
    expect(isoFromUtcText('2025-03-04 05:06:07.1234')).toBe('2025-03-04T05:06:07.123Z');
    expect(isoFromUtcText('2025-03-04 05:06:07.12345')).toBe('2025-03-04T05:06:07.123Z');
    expect(isoFromUtcText('2025-03-04 05:06:07.999999')).toBe('2025-03-04T05:06:07.999Z');
    expect(isoFromUtcText('2025-03-04 05:06:07.000001')).toBe('2025-03-04T05:06:07.000Z');
    expect(isoFromUtcText('2025-12-31 23:59:59.9999')).toBe('2025-12-31T23:59:59.999Z');
  });

  it('writes a leap day as it is', () => {
    expect(isoFromUtcText('2024-02-29 12:00:00')).toBe('2024-02-29T12:00:00.000Z');
    expect(isoFromUtcText('2000-02-29 23:59:59.999999')).toBe('2000-02-29T23:59:59.999Z');
  });

  it('writes the first and the last instant of the four-digit years as toISOString does', () => {
    expect(isoFromUtcText('0001-01-01 00:00:00')).toBe('0001-01-01T00:00:00.000Z');
    expect(isoFromUtcText('0001-01-01 00:00:00')).toBe(isoOf(1, 1, 1, 0, 0, 0, 0));
    expect(isoFromUtcText('9999-12-31 23:59:59.999999')).toBe('9999-12-31T23:59:59.999Z');
    expect(isoFromUtcText('9999-12-31 23:59:59.999999')).toBe(isoOf(9999, 12, 31, 23, 59, 59, 999_999));
  });

  it('writes exactly what toISOString writes for the same instant truncated to milliseconds, over 5,000 generated timestamps', () => {
    const next = random(20251123);
    const mismatches: string[] = [];
    for (let i = 0; i < 5000; i += 1) {
      const year = i % 10 === 0 ? [1, 4, 100, 1900, 2000, 2024, 9999][next(7)]! : 1 + next(9999);
      const month = 1 + next(12);
      const day = 1 + next(daysIn(year, month));
      const [hour, minute, second] = [next(24), next(60), next(60)];
      const microseconds = i % 7 === 0 ? 0 : next(1_000_000);
      // PostgreSQL drops trailing zeros (a fraction of zero is not written); the form with every digit is accepted too.
      const digits = pad(microseconds, 6);
      const fraction = microseconds === 0 ? '' : `.${i % 2 === 0 ? digits.replace(/0+$/, '') : digits}`;
      const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)} ${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}${fraction}`;
      const expected = isoOf(year, month, day, hour, minute, second, microseconds);
      if (isoFromUtcText(text) !== expected) mismatches.push(`${text} → ${String(isoFromUtcText(text))}, expected ${expected}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('returns text in any other form unchanged, for DateTime to refuse', () => {
    for (const text of [
      '10000-01-01 00:00:00',
      '275760-09-13 00:00:00',
      'infinity',
      '-infinity',
      '0001-12-31 23:59:59 BC',
      '0044-03-15 12:00:00.5 BC',
      '2025-03-04 05:06:07+00',
      '2025-03-04 05:06:07.123+01:30',
      '2025-03-04T05:06:07Z',
      '2025-03-04T05:06:07.000Z',
      '2025-03-04 05:06:07.1234567',
      '2025-03-04 05:06:07.',
      '2025-03-04 05:06',
      '2025-03-04',
      '25-03-04 05:06:07',
      ' 2025-03-04 05:06:07',
      '2025-03-04 05:06:07\n',
      '２０２５-03-04 05:06:07',
      '',
    ]) {
      expect(isoFromUtcText(text), text).toBe(text);
    }
  });

  it('returns a value that is not a string unchanged', () => {
    const date = new Date('2025-03-04T05:06:07.000Z');
    const object = { text: '2025-03-04 05:06:07' };
    expect(isoFromUtcText(null)).toBeNull();
    expect(isoFromUtcText(undefined)).toBeUndefined();
    expect(isoFromUtcText(1741064767000)).toBe(1741064767000);
    expect(isoFromUtcText(date)).toBe(date);
    expect(isoFromUtcText(object)).toBe(object);
    expect(isoFromUtcText(['2025-03-04 05:06:07'])).toEqual(['2025-03-04 05:06:07']);
  });
});

describe('utcTextColumn', () => {
  it('reads a timestamptz column as its UTC wall time in text, whatever the session time zone', () => {
    expect(utcTextColumn('t.starts_at')).toBe(`(t.starts_at AT TIME ZONE 'UTC')::text`);
    expect(utcTextColumn('created_at')).toBe(`(created_at AT TIME ZONE 'UTC')::text`);
  });
});
