import { describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../src/db/database.ts';
import { AnswerCache } from '../../src/answer-cache/answer-cache.ts';

/**
 * A database whose only answer is the data version the test sets; it counts the reads. A
 * connection is handed out once `connections` lets it (at once unless a test holds them back); a
 * read sees the version as it is when sent and answers once `wire` lets it.
 */
function versionSource(initial: number | null) {
  const connection = {
    async query() {
      throw new Error('the response cache sends no other statement');
    },
    async queryArrays(text: string) {
      expect(text).toMatch(/FROM data_versions/);
      source.reads += 1;
      const seen = source.version;
      await source.wire;
      // As the statement returns it: text, or null for a workspace without a version.
      return [[seen === null ? null : String(seen)]];
    },
  } as unknown as Queryable;
  const source = {
    version: initial as number | null,
    reads: 0,
    connections: Promise.resolve(),
    wire: Promise.resolve(),
    db: {
      async withConnection<T>(work: (connection: Queryable) => Promise<T>): Promise<T> {
        await source.connections;
        return work(connection);
      },
    } as Pick<Database, 'withConnection'>,
  };
  return source;
}

const request = (variables: Record<string, unknown> = { workspaceId: 'ws_1', withParticipant: false }) => ({
  answer: 'bookings',
  workspaceId: 'ws_1',
  variables,
});

/** Until the source has taken `count` reads: a read is sent at the end of the turn it was asked in. */
async function untilReads(source: { reads: number }, count: number): Promise<void> {
  for (let turn = 0; source.reads < count; turn += 1) {
    if (turn > 100) throw new Error(`${source.reads} reads, waiting for ${count}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const bytes = (text: string) => [Buffer.from(text, 'utf8')];
const text = (body: readonly Buffer[]) => Buffer.concat(body).toString('utf8');

describe('the answer cache', () => {
  it('serves the stored bytes while the data version stays, and builds again once it moves', async () => {
    const source = versionSource(7);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    let builds = 0;
    const build = async () => bytes(`answer ${++builds} of version ${source.version}`);

    const first = await cache.answer(request(), build);
    expect([first.outcome, text(first.body), first.length]).toEqual(['miss', 'answer 1 of version 7', 21]);
    // Read once, before building: the answer is stored under version 7.
    expect(source.reads).toBe(1);
    const second = await cache.answer(request(), build);
    expect([second.outcome, text(second.body)]).toEqual(['hit', 'answer 1 of version 7']);
    expect(source.reads).toBe(2);

    source.version = 8;
    const third = await cache.answer(request(), build);
    expect([third.outcome, text(third.body)]).toEqual(['miss', 'answer 2 of version 8']);
    // The newer version replaced the older entry: one entry per answer, workspace and variables.
    expect(cache.entries).toBe(1);
    expect(builds).toBe(2);
  });

  it('stores an answer under the version read before building it, so that a request reading a later version builds again', async () => {
    const source = versionSource(1);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    const moving = async () => {
      // A change commits while the answer's statements run: the answer may show it already.
      source.version = 2;
      return bytes('answer read partly before, partly after a change');
    };
    expect((await cache.answer(request(), moving)).outcome).toBe('miss');
    expect(source.reads).toBe(1);
    // Every later request reads version 2: the entry of version 1 is never served to it.
    const next = await cache.answer(request(), async () => bytes('answer of version 2'));
    expect([next.outcome, text(next.body)]).toEqual(['miss', 'answer of version 2']);
    expect((await cache.answer(request(), async () => bytes('not built'))).outcome).toBe('hit');
  });

  it('keeps variants apart: other variables never get the bytes built for one', async () => {
    const cache = new AnswerCache({ maxBytes: 1024, db: versionSource(3).db });
    await cache.answer(request({ workspaceId: 'ws_1', withParticipant: true }), async () => bytes('with participants'));
    const limited = await cache.answer(request({ workspaceId: 'ws_1', withParticipant: false }), async () => bytes('without'));
    expect([limited.outcome, text(limited.body)]).toEqual(['miss', 'without']);
    const other = await cache.answer({ ...request(), answer: 'courses' }, async () => bytes('courses'));
    expect([other.outcome, text(other.body)]).toEqual(['miss', 'courses']);
  });

  it('serves an answer larger than the bound uncached, whole, and keeps within the bound by evicting the least recently used', async () => {
    const cache = new AnswerCache({ maxBytes: 300, db: versionSource(1).db });
    const large = 'x'.repeat(400);
    const first = await cache.answer(request(), async () => [Buffer.from(large.slice(0, 250)), Buffer.from(large.slice(250))]);
    expect([first.outcome, text(first.body), first.length]).toEqual(['bypass', large, 400]);
    expect(cache.bytes).toBe(0);

    const outcomes = [first.outcome];
    for (const workspaceId of ['ws_a', 'ws_b', 'ws_c', 'ws_d']) {
      outcomes.push((await cache.answer({ answer: 'courses', workspaceId, variables: { workspaceId } }, async () => bytes('y'.repeat(90)))).outcome);
      expect(cache.bytes).toBeLessThanOrEqual(300);
    }
    expect(cache.evictions).toBeGreaterThan(0);
    expect(outcomes).toEqual(['bypass', 'miss', 'miss', 'miss', 'miss']);
  });

  it('lets concurrent requests of one answer and version share a single build', async () => {
    const source = versionSource(5);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    let builds = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const build = async () => {
      builds += 1;
      await gate;
      return bytes('shared');
    };
    const pending = Array.from({ length: 5 }, () => cache.answer(request(), build));
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    const answers = await Promise.all(pending);
    expect(builds).toBe(1);
    // Those that waited for another's build say so: they were not served from the cache.
    expect(answers.map((answer) => answer.outcome).sort()).toEqual(['miss', 'shared', 'shared', 'shared', 'shared']);
    expect(new Set(answers.map((answer) => text(answer.body)))).toEqual(new Set(['shared']));
  });

  it('keeps a small answer in memory of its own, not in a slab of Node\'s shared buffer pool', async () => {
    const cache = new AnswerCache({ maxBytes: 1024, db: versionSource(1).db });
    const pooled = Buffer.from('{"data":[]}', 'utf8');
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
    await cache.answer(request(), async () => [pooled]);
    const hit = await cache.answer(request(), async () => bytes('unused'));
    expect(hit.outcome).toBe('hit');
    expect(hit.body.map((piece) => [piece.buffer.byteLength, piece.toString()])).toEqual([[11, '{"data":[]}']]);
  });

  it('lets concurrent requests share a version read not sent yet, never one already sent', async () => {
    const source = versionSource(1);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    await cache.answer(request(), async () => bytes('stored'));
    source.reads = 0;
    // The pool has no free connection: the requests wait together for one read.
    let free!: () => void;
    source.connections = new Promise<void>((resolve) => (free = resolve));
    const waiting = Array.from({ length: 5 }, () => cache.answer(request(), async () => bytes('unused')));
    free();
    expect((await Promise.all(waiting)).map((answer) => answer.outcome)).toEqual(['hit', 'hit', 'hit', 'hit', 'hit']);
    expect(source.reads).toBe(1);
    // A request that comes once that read was sent gets a read of its own, which sees a change
    // committed in between.
    source.connections = Promise.resolve();
    const first = cache.answer(request(), async () => bytes('unused'));
    await untilReads(source, 2);
    source.version = 2;
    const second = cache.answer(request(), async () => bytes('version 2'));
    expect((await first).outcome).toBe('hit');
    expect([(await second).outcome, text((await second).body)]).toEqual(['miss', 'version 2']);
  });

  it('lets requests that come in one turn of the event loop share one version read, even with a connection free', async () => {
    const source = versionSource(1);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    await cache.answer(request(), async () => bytes('stored'));
    source.reads = 0;
    const first = cache.answer(request(), async () => bytes('unused'));
    // Later in the same turn, after whatever the first request's own steps take.
    for (let tick = 0; tick < 20; tick += 1) await Promise.resolve();
    const second = cache.answer(request(), async () => bytes('unused'));
    expect((await Promise.all([first, second])).map((answer) => answer.outcome)).toEqual(['hit', 'hit']);
    expect(source.reads).toBe(1);
  });

  it('keeps one version read of a workspace on the wire: requests that come meanwhile share the next, which sees what was committed before they came', async () => {
    const source = versionSource(1);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    await cache.answer(request(), async () => bytes('version 1'));
    source.reads = 0;
    let answer!: () => void;
    source.wire = new Promise<void>((resolve) => (answer = resolve));
    const onTheWire = cache.answer(request(), async () => bytes('unused'));
    await untilReads(source, 1);
    // Committed after that read was sent, before these requests came: they must see it.
    source.version = 2;
    const later = Array.from({ length: 5 }, () => cache.answer(request(), async () => bytes('version 2')));
    await new Promise((resolve) => setImmediate(resolve));
    expect(source.reads).toBe(1);
    answer();
    expect([(await onTheWire).outcome, text((await onTheWire).body)]).toEqual(['hit', 'version 1']);
    const answers = await Promise.all(later);
    expect(answers.map((each) => text(each.body))).toEqual(Array(5).fill('version 2'));
    expect(answers.map((each) => each.outcome).sort()).toEqual(['miss', 'shared', 'shared', 'shared', 'shared']);
    expect(source.reads).toBe(2);
  });

  it('sends the next version read even when the one on the wire fails, and a failed read fails only its own requests', async () => {
    const source = versionSource(3);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    let fail!: (error: Error) => void;
    source.wire = new Promise<void>((_resolve, reject) => (fail = reject));
    const failing = cache.answer(request(), async () => bytes('unused'));
    await untilReads(source, 1);
    source.wire = Promise.resolve();
    const later = cache.answer(request(), async () => bytes('version 3'));
    fail(new Error('connection lost'));
    await expect(failing).rejects.toThrow('connection lost');
    expect([(await later).outcome, text((await later).body)]).toEqual(['miss', 'version 3']);
    expect(source.reads).toBe(2);
  });

  it('with a bound of 0 is off: every answer is built, no version is read', async () => {
    const source = versionSource(1);
    const cache = new AnswerCache({ maxBytes: 0, db: source.db });
    expect(cache.enabled).toBe(false);
    for (let i = 0; i < 2; i += 1) expect((await cache.answer(request(), async () => bytes('built'))).outcome).toBe('off');
    expect(source.reads).toBe(0);
  });

  it('uses a data version read by the caller instead of reading it again', async () => {
    const source = versionSource(4);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    await cache.answer({ ...request(), version: '4' }, async () => bytes('calendar'));
    expect(source.reads).toBe(0);
    expect((await cache.answer({ ...request(), version: '4' }, async () => bytes('again'))).outcome).toBe('hit');
    expect(source.reads).toBe(0);
  });

  it('serves nothing from the cache and stores nothing while the workspace has no data version, and caches again once it has one', async () => {
    const source = versionSource(1);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    await cache.answer(request(), async () => bytes('version 1'));
    source.version = null;
    let builds = 0;
    for (let i = 0; i < 2; i += 1) {
      const answer = await cache.answer(request(), async () => bytes(`built ${++builds}`));
      expect([answer.outcome, text(answer.body)]).toEqual(['bypass', `built ${builds}`]);
    }
    // A caller's own read without a version is not cached either.
    expect((await cache.answer({ ...request(), version: null }, async () => bytes('calendar'))).outcome).toBe('bypass');
    source.version = 2;
    expect((await cache.answer(request(), async () => bytes('version 2'))).outcome).toBe('miss');
    expect(text((await cache.answer(request(), async () => bytes('unused'))).body)).toBe('version 2');
  });

  it('keeps the entry of the version learnt later when a build of one learnt earlier ends after it', async () => {
    const source = versionSource(1);
    const cache = new AnswerCache({ maxBytes: 1024, db: source.db });
    let finish!: () => void;
    const slow = cache.answer(request(), async () => {
      await new Promise<void>((resolve) => (finish = resolve));
      return bytes('version 1, built slowly');
    });
    await untilReads(source, 1);
    source.version = 2;
    expect((await cache.answer(request(), async () => bytes('version 2'))).outcome).toBe('miss');
    finish();
    expect((await slow).outcome).toBe('bypass');
    const next = await cache.answer(request(), async () => bytes('not built'));
    expect([next.outcome, text(next.body)]).toEqual(['hit', 'version 2']);
  });
});
