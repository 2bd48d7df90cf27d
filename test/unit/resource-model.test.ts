import { describe, expect, it } from 'vitest';
import type { Catalog, CatalogTable } from '../../src/model/catalog.ts';
import { ModelError, deriveModel, type Overlay } from '../../src/model/resource-model.ts';
import { compileOperations } from '../../src/graphql/operations.ts';
import { createSchema } from '../../src/graphql/schema.ts';
import { frozenCatalog as catalog, frozenOverlay as overlay } from '../support/frozen-model.ts';

/** The catalog as a migration adding venues (and sessions.venue_id) would leave it. */
function withVenues(change: (venues: CatalogTable) => void = () => undefined): Catalog {
  const copy = structuredClone(catalog);
  const venues: CatalogTable = {
    columns: [
      { name: 'id', type: 'text', nullable: false, default: "new_id('ven'::text)" },
      { name: 'workspace_id', type: 'text', nullable: false },
      { name: 'name', type: 'text', nullable: false },
      { name: 'address', type: 'text', nullable: false },
    ],
    primaryKey: ['id'],
    foreignKeys: [{ name: 'venues_workspace_id_fkey', columns: ['workspace_id'], table: 'workspaces', references: ['id'] }],
    uniques: [],
    checks: [],
    indexes: [],
  };
  change(venues);
  copy.tables.venues = venues;
  copy.tables.sessions!.columns.push({ name: 'venue_id', type: 'text', nullable: true });
  copy.tables.sessions!.foreignKeys.push({ name: 'sessions_venue_id_fkey', columns: ['venue_id'], table: 'venues', references: ['id'] });
  return copy;
}

const refusal = (source: Catalog, extra: Overlay): string => {
  try {
    deriveModel(source, { ...overlay, ...extra });
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    return (error as Error).message;
  }
  throw new Error('the model was derived');
};

describe('the resource model: the catalog with the overlay', () => {
  it('serves a new table from its catalog entry and an empty overlay entry: fields, relations both ways, a root, its workspace', () => {
    const { registry } = deriveModel(withVenues(), { ...overlay, venues: {} });
    const venue = registry.get('Venue');
    expect(Object.keys(venue.fields)).toEqual(['id', 'workspaceId', 'name', 'address']);
    expect(venue.workspaceField).toBe('workspaceId');
    expect(venue.roots).toEqual({ venue: { argument: 'id' } });
    expect(registry.relation(registry.get('Session'), 'venue')).toMatchObject({ resource: 'Venue', kind: 'one', localField: 'venueId', foreignField: 'id', optional: true });
    expect(registry.relation(venue, 'sessions')).toMatchObject({ resource: 'Session', kind: 'many', localField: 'id', foreignField: 'venueId' });
    expect(registry.relation(registry.get('Workspace'), 'venues')).toMatchObject({ resource: 'Venue', kind: 'many' });
  });

  it('refuses a misspelt column, naming the overlay, the table, the column and the nearest one', () => {
    const message = refusal(withVenues(), { venues: { hide: ['adress'] } });
    expect(message).toContain('src/model/overlay.ts: venues: hide names the column "adress", which src/model/catalog.generated.ts does not list for venues (did you mean "address"?)');
    expect(refusal(withVenues(), { venues: { order: ['nmae'] } })).toContain('src/model/overlay.ts: venues: order names the column "nmae"');
  });

  it('refuses a column no migration creates, and a table no migration creates', () => {
    expect(refusal(withVenues(), { venues: { rename: { capacity: 'seats' } } })).toContain(
      'src/model/overlay.ts: venues: rename names the column "capacity", which src/model/catalog.generated.ts does not list for venues (its columns: id, workspace_id, name, address)',
    );
    expect(refusal(catalog, { venues: {} })).toContain('src/model/overlay.ts: venues: src/model/catalog.generated.ts has no table "venues": add its migration and run npm run generate');
  });

  it('refuses a column of a type the service cannot serve unless it is hidden', () => {
    const jsonb = withVenues((venues) => venues.columns.push({ name: 'opening_hours', type: 'jsonb', nullable: true }));
    expect(refusal(jsonb, { venues: {} })).toContain('src/model/overlay.ts: venues: the column "opening_hours" is of type jsonb, which the service cannot serve: hide it');
    expect(() => deriveModel(jsonb, { ...overlay, venues: { hide: ['opening_hours'] } })).not.toThrow();
  });

  it('refuses a relation no foreign key gives, and a list of a table without one key to it', () => {
    expect(refusal(withVenues(), { venues: { relations: { bookings: 'visits' } } })).toContain(
      'src/model/overlay.ts: venues: relations names "bookings", which no foreign key gives venues (its relations: sessions, workspace): a relation needs a foreign key in a migration',
    );
    expect(refusal(withVenues(), { venues: { lists: { open: { of: 'bookings', by: 'updated_at' } } } })).toContain('src/model/overlay.ts: venues: lists.open: 0 foreign keys of bookings reference venues; a list needs exactly one');
  });

  it('refuses a table whose rows reach no workspace, and two columns served under one name', () => {
    const noWorkspace = withVenues((venues) => {
      venues.columns = venues.columns.filter((column) => column.name !== 'workspace_id');
      venues.foreignKeys = [];
    });
    expect(refusal(noWorkspace, { venues: {} })).toContain('src/model/overlay.ts: venues: has no workspace_id column: say how its rows reach a workspace');
    expect(refusal(withVenues(), { venues: { rename: { address: 'name' } } })).toContain('src/model/overlay.ts: venues: the columns "name" and "address" are both served as "name": rename one');
  });

  it('lists every disagreement at once', () => {
    const message = refusal(withVenues(), { venues: { hide: ['adress'], order: ['nmae'], relations: { bookings: 'visits' } } });
    expect(message.match(/^ {2}- /gm)).toHaveLength(3);
  });

  it('marks the personal columns the overlay names, and no other; a whole table marks the resource', () => {
    const withContact = withVenues((venues) => venues.columns.push({ name: 'contact_email', type: 'text', nullable: true }));
    const { registry } = deriveModel(withContact, { ...overlay, venues: { personalData: ['contact_email'] } });
    const venue = registry.get('Venue');
    expect(Object.entries(venue.fields).filter(([, field]) => typeof field !== 'string' && field.personal).map(([name]) => name)).toEqual(['contactEmail']);
    expect(venue.personalData).toBeUndefined();
    expect(registry.get('Participant').personalData).toBe(true);
  });

  it('refuses a personal column the catalog lacks, one the overlay hides, and one rows are found, joined, placed or ordered by, each named with its use', () => {
    const message = refusal(withVenues(), {
      venues: { order: ['name'], hide: ['address'], personalData: ['adress', 'address', 'id', 'workspace_id', 'name'] },
      sessions: { order: ['starts_at'], personalData: ['venue_id'] },
    });
    for (const expected of [
      'src/model/overlay.ts: venues: personalData names the column "adress", which src/model/catalog.generated.ts does not list for venues',
      'src/model/overlay.ts: venues: personalData names "address", which hide keeps from being served',
      'src/model/overlay.ts: venues: personalData names "id", but it is the key of the table (mark the whole table with personalData: true instead)',
      'src/model/overlay.ts: venues: personalData names "id", but the relation sessions joins on it',
      'src/model/overlay.ts: venues: personalData names "workspace_id", but it places rows in their workspace',
      `src/model/overlay.ts: venues: personalData names "name", but order sorts by it, and a list's cursors carry the values it sorts by`,
      'src/model/overlay.ts: sessions: personalData names "venue_id", but the relation venue joins on it',
    ]) {
      expect(message).toContain(expected);
    }
  });

  it('refuses a fixed operation that selects what the overlay hides, naming the operation file and the field', () => {
    const model = deriveModel(catalog, { ...overlay, sessions: { ...overlay.sessions, hide: ['location'] } });
    expect(() => compileOperations(createSchema(model))).toThrow(
      'src/graphql/operations.ts: the operation courses does not match the schema the catalog and the overlay give: Cannot query field "location" on type "Session".',
    );
  });
});
