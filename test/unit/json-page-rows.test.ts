import { describe, expect, it } from 'vitest';
import { ResourceRegistry, type RelationDefinition, type ResourceDefinition } from '../../src/model/resource-registry.ts';
import { buildConnectionQuery } from '../../src/sql/sql-builder.ts';
import { compileRow } from '../../src/loaders/statements.ts';

const owner: ResourceDefinition = { name: 'Owner', table: 'owners', key: 'id', fields: { id: 'id' } };
const thing: ResourceDefinition = {
  name: 'Thing',
  table: 'things',
  key: 'id',
  fields: {
    id: 'id',
    ownerId: 'owner_id',
    rank: { column: 'rank', type: 'int', nullable: true },
    done: { column: 'done', type: 'boolean', nullable: true },
    madeAt: { column: 'made_at', type: 'timestamp' },
  },
};
const things: RelationDefinition = { resource: 'Thing', kind: 'many', localField: 'id', foreignField: 'ownerId', orderBy: [{ field: 'rank' }] };
const query = buildConnectionQuery(new ResourceRegistry([owner, thing]), things, { fields: ['rank', 'done', 'madeAt'] });

describe('a page read as JSON text arrays', () => {
  it('casts what is not text to text in the statement, and says which columns are read back as numbers or booleans', () => {
    expect(query.pageAs).toBe('json');
    expect(query.text).toContain(`ARRAY[q."id", q."rank"::text, q."done"::text, q."madeAt", q."__o0"::text, q."__o1"]`);
    expect(query.fromText).toEqual({ rank: 'int', done: 'boolean', __o0: 'int' });
  });

  it('gives each row the values the driver gives a row per page row: numbers, booleans, ISO timestamps, nulls, the parent apart', () => {
    const toRow = compileRow(query, -1);
    expect(toRow(['t1', '42', 'true', '2026-01-02 03:04:05.5', '42', 't1'], 'o1')).toEqual({
      __parent: 'o1',
      id: 't1',
      rank: 42,
      done: true,
      madeAt: '2026-01-02T03:04:05.500Z',
      __o0: 42,
      __o1: 't1',
    });
    expect(toRow(['t2', null, null, '2026-01-02 03:04:05', null, 't2'], 'o1')).toMatchObject({ rank: null, done: null, __o0: null });
    expect(toRow(['t3', '-7', 'false', '2026-01-02 03:04:05', '-7', 't3'], 'o2')).toMatchObject({ __parent: 'o2', rank: -7, done: false });
  });
});
