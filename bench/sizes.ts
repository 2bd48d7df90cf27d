/** The benchmark's data sizes, as import fixtures (deterministic). */

const iso = (ms: number) => new Date(ms).toISOString();
const BASE = Date.UTC(2026, 0, 1);

export interface SizeSpec {
  name: 'S' | 'M' | 'L';
  publishedRuns: number;
  sessionsPerRun: number;
  draftRuns: number;
  cancelledPerRun: number;
  bookings: number;
}

export const SIZES: SizeSpec[] = [
  { name: 'S', publishedRuns: 5, sessionsPerRun: 2, draftRuns: 0, cancelledPerRun: 0, bookings: 20 },
  { name: 'M', publishedRuns: 200, sessionsPerRun: 6, draftRuns: 20, cancelledPerRun: 1, bookings: 5_000 },
  { name: 'L', publishedRuns: 10_000, sessionsPerRun: 10, draftRuns: 0, cancelledPerRun: 0, bookings: 100_000 },
];

export function fixtureFor(size: SizeSpec): unknown {
  const templates = Array.from({ length: 20 }, (_, i) => ({ ref: `t${i}`, title: `Course ${i}, level ${i % 3}`, description: `About course ${i}; bring a notebook.` }));
  const runs = [];
  for (let r = 0; r < size.publishedRuns + size.draftRuns; r += 1) {
    const published = r < size.publishedRuns;
    const sessions = [];
    for (let s = 0; s < size.sessionsPerRun + size.cancelledPerRun; s += 1) {
      sessions.push({
        ref: `r${r}s${s}`,
        startsAt: iso(BASE + (r * 7 + s) * 3_600_000),
        durationMinutes: 60 + (s % 4) * 30,
        timeZone: ['Europe/Berlin', 'America/New_York', 'Asia/Tokyo'][r % 3],
        location: `Room ${r % 50}, building ${s}`,
        status: s < size.sessionsPerRun ? 'scheduled' : 'cancelled',
      });
    }
    runs.push({ ref: `r${r}`, template: `t${r % 20}`, status: published ? 'published' : 'draft', sessions });
  }
  const bookings = Array.from({ length: size.bookings }, (_, b) => ({
    ref: `b${b}`,
    courseRun: `r${b % size.publishedRuns}`,
    source: ['admin', 'public_page', 'widget', 'api'][b % 4],
    status: ['pending', 'confirmed', 'waitlisted', 'cancelled', 'expired'][b % 5],
    createdAt: iso(BASE + b * 60_000),
    updatedAt: iso(BASE + b * 60_000 + 30_000),
    participant: { name: `Participant ${b}`, email: `p${b}@bench.example` },
  }));
  return {
    workspace: { name: `Bench ${size.name}` },
    members: [{ ref: 'owner', email: 'owner@bench.example', name: 'Bench Owner', role: 'owner' }],
    courseTemplates: templates,
    courseRuns: runs,
    bookings,
  };
}
