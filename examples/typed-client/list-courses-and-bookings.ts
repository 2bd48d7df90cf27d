/**
 * Lists a workspace's courses and bookings through a client typed from the OpenAPI document.
 *
 *   API_URL=http://127.0.0.1:3000 API_KEY=svc_api_… npx tsx examples/typed-client/list-courses-and-bookings.ts
 */
import { pathToFileURL } from 'node:url';
import createClient from 'openapi-fetch';
import type { components, paths } from '../../src/contract/public-v1-types.ts';

type Course = components['schemas']['Course'];
type Booking = components['schemas']['Booking'];

const MAX_RETRIES = 3;

/**
 * fetch that answers 429 by waiting the seconds `Retry-After` gives, then sending again: clients
 * wait that long (docs/contract-rules.md, limits.per-key). Every request here is a GET, so
 * repeating it is safe.
 */
async function fetchRespectingRetryAfter(request: Request): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(request.clone());
    if (response.status !== 429 || attempt === MAX_RETRIES) return response;
    const seconds = Number(response.headers.get('Retry-After') ?? '60');
    await response.body?.cancel();
    console.error(`429 rate_limit_exceeded: waiting ${seconds} s (Retry-After) before retrying`);
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  }
}

export function createPublicApiClient(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` }, fetch: fetchRespectingRetryAfter });
}

type PublicApiClient = ReturnType<typeof createPublicApiClient>;

/** The error shape of the contract, turned into an exception with its code. */
function fail(path: string, status: number, error: { error: { code: string; message: string } } | undefined): never {
  throw new Error(`${path} answered ${status} ${error?.error.code ?? ''}: ${error?.error.message ?? ''}`.trim());
}

export async function listCourses(client: PublicApiClient): Promise<Course[]> {
  const { data, error, response } = await client.GET('/api/public/v1/courses');
  if (!data) fail('/api/public/v1/courses', response.status, error);
  return data.data;
}

export async function listBookings(client: PublicApiClient): Promise<Booking[]> {
  const { data, error, response } = await client.GET('/api/public/v1/bookings');
  if (!data) fail('/api/public/v1/bookings', response.status, error);
  return data.data;
}

async function main(): Promise<void> {
  const apiKey = process.env.API_KEY;
  if (!apiKey) {
    console.error('Set API_KEY to a key with courses:read and bookings:read (npm start prints demo keys).');
    process.exit(2);
  }
  const client = createPublicApiClient(process.env.API_URL ?? 'http://127.0.0.1:3000', apiKey);

  const courses = await listCourses(client);
  console.log(`${courses.length} courses`);
  for (const course of courses) {
    const first = course.sessions[0];
    console.log(`  ${course.title}: ${course.sessions.length} sessions, first ${first?.startsAt} (${first?.timeZone}) at ${first?.location}`);
  }

  const bookings = await listBookings(client);
  console.log(`${bookings.length} bookings`);
  for (const booking of bookings) {
    // `participant` is present only for keys with participants:read (and never null).
    const who = booking.participant ? ` for ${booking.participant.name}` : '';
    console.log(`  ${booking.createdAt} ${booking.status} via ${booking.source}${who}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
