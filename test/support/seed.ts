import { createApiKey } from '../../src/auth/api-key-store.ts';
import type { Database } from '../../src/db/database.ts';
import { importFixture } from '../../src/fixtures/import-fixture.ts';

export const OWNER_EMAIL = 'owner@seed.example';

const iso = (value: string) => new Date(value).toISOString();

/**
 * A workspace that exercises every listing rule: drafts, unpublished runs, cancelled sessions,
 * a run without sessions, equal session starts and equal booking times (tie-breaking), bookings
 * with and without participants, more than 100 bookings.
 */
export function contractFixture(name: string, bookingCount = 105) {
  const bookings = Array.from({ length: bookingCount }, (_, i) => {
    // b3 and b4 share their creation time: the tie is broken by id, descending.
    const createdAt = new Date(Date.UTC(2026, 6, 1, 0, i === 4 ? 3 : i)).toISOString();
    return {
      ref: `b${i}`,
      courseRun: ['r1', 'r2', 'r4'][i % 3]!,
      source: (['admin', 'public_page', 'widget', 'api'] as const)[i % 4]!,
      status: (['pending', 'confirmed', 'waitlisted', 'cancelled', 'expired'] as const)[i % 5]!,
      createdAt,
      updatedAt: createdAt,
      ...(i % 7 === 0 ? {} : { participant: { name: `Person ${i} of ${name}`, email: `p${i}@${name.toLowerCase().replace(/\W/g, '')}.example` } }),
    };
  });
  return {
    workspace: { name },
    members: [
      { ref: 'owner', email: OWNER_EMAIL, name: 'Olivia Owner', role: 'owner' },
      { ref: 'plain', email: 'member@seed.example', name: 'Max Member', role: 'member' },
    ],
    courseTemplates: [
      { ref: 't1', title: `${name} First Aid`, description: 'Two mornings, one afternoon.' },
      { ref: 't2', title: `${name} Pottery`, description: 'Clay; wheels, glaze.\nBring an apron.' },
      { ref: 't3', title: `${name} Draft course`, description: 'Not yet published.' },
      { ref: 't4', title: `${name} Retired course`, description: 'Unpublished.' },
    ],
    courseRuns: [
      {
        ref: 'r1',
        template: 't1',
        status: 'published',
        sessions: [
          { ref: 's1', startsAt: iso('2027-01-10T09:00:00Z'), durationMinutes: 90, timeZone: 'Europe/Berlin', location: 'Room 1', status: 'scheduled' },
          { ref: 's2', startsAt: iso('2026-12-01T09:00:00Z'), durationMinutes: 60, timeZone: 'Europe/Berlin', location: 'Room 2', status: 'scheduled' },
          // Earliest of all, but cancelled: it neither appears nor orders the run.
          { ref: 's3', startsAt: iso('2026-01-01T09:00:00Z'), durationMinutes: 60, timeZone: 'Europe/Berlin', location: 'Room 3', status: 'cancelled' },
        ],
      },
      {
        ref: 'r2',
        template: 't2',
        status: 'published',
        sessions: [
          // Past and future scheduled sessions are both listed.
          { ref: 's4', startsAt: iso('2025-06-01T08:00:00Z'), durationMinutes: 120, timeZone: 'America/New_York', location: 'Studio, 2nd floor; back door', status: 'scheduled' },
          { ref: 's5', startsAt: iso('2027-02-01T08:00:00Z'), durationMinutes: 120, timeZone: 'America/New_York', location: 'Studio', status: 'scheduled' },
        ],
      },
      {
        ref: 'r5',
        template: 't1',
        status: 'published',
        sessions: [
          // Same start as s2 in r1: ties between sessions and between runs are broken by id.
          { ref: 's6', startsAt: iso('2026-12-01T09:00:00Z'), durationMinutes: 30, timeZone: 'Asia/Tokyo', location: 'Online', status: 'scheduled' },
          { ref: 's6b', startsAt: iso('2026-12-01T09:00:00Z'), durationMinutes: 30, timeZone: 'Asia/Tokyo', location: 'Online', status: 'scheduled' },
        ],
      },
      { ref: 'r3', template: 't3', status: 'draft', sessions: [{ ref: 's7', startsAt: iso('2026-12-05T09:00:00Z'), durationMinutes: 60, timeZone: 'UTC', location: 'Hall', status: 'scheduled' }] },
      { ref: 'r4', template: 't4', status: 'unpublished', sessions: [{ ref: 's8', startsAt: iso('2026-12-06T09:00:00Z'), durationMinutes: 60, timeZone: 'UTC', location: 'Hall', status: 'scheduled' }] },
      { ref: 'r6', template: 't1', status: 'published', sessions: [] },
      { ref: 'r7', template: 't2', status: 'published', sessions: [{ ref: 's9', startsAt: iso('2026-12-07T09:00:00Z'), durationMinutes: 60, timeZone: 'UTC', location: 'Hall', status: 'cancelled' }] },
    ],
    bookings,
  };
}

export interface SeededWorkspace {
  workspaceId: string;
  ids: Record<string, string>;
  /** courses:read, bookings:read, participants:read */
  fullKey: string;
  /** courses:read, bookings:read */
  bookingsKey: string;
  coursesOnlyKey: string;
  bookingsOnlyKey: string;
}

export async function seedWorkspace(db: Database, fixture: unknown): Promise<SeededWorkspace> {
  const { workspaceId, ids } = await importFixture(db, fixture, {});
  const key = async (scopes: string[]) => (await createApiKey(db, { workspaceId, memberEmail: OWNER_EMAIL, scopes })).key;
  return {
    workspaceId,
    ids,
    fullKey: await key(['courses:read', 'bookings:read', 'participants:read']),
    bookingsKey: await key(['courses:read', 'bookings:read']),
    coursesOnlyKey: await key(['courses:read']),
    bookingsOnlyKey: await key(['bookings:read']),
  };
}
