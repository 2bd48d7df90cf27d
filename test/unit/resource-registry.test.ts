import { describe, expect, it } from 'vitest';
import { ResourceRegistry, type RelationDefinition, type ResourceDefinition } from '../../src/model/resource-registry.ts';
import { serviceModel } from '../../src/model/service-model.ts';
import { author, review, cover, book } from '../support/book-shelf-registry.ts';

describe('the resource registry', () => {
  const plain = (overrides: Partial<ResourceDefinition>): ResourceDefinition => ({
    name: 'Thing',
    table: 'things',
    key: 'id',
    fields: { id: 'id', name: 'name' },
    ...overrides,
  });

  it('accepts plain lowercase SQL identifiers with digits and underscores', () => {
    expect(() => new ResourceRegistry([plain({ table: '_things_2', fields: { id: 'id', name: 'name_2', other: '_x' } })])).not.toThrow();
  });

  it('refuses a table name that is not a plain SQL identifier, naming it', () => {
    for (const table of ['Things', 'things;', 'public.things', '"things"', 'my things', '2things', 'things-x', '']) {
      expect(() => new ResourceRegistry([plain({ table })]), table).toThrow(`Not a plain SQL identifier: ${table}`);
    }
  });

  it('refuses a column name that is not a plain SQL identifier, naming it', () => {
    for (const column of ['Name', 'name"', 'name; DROP TABLE things', 'lower(name)', 'n.name', 'naïve']) {
      expect(() => new ResourceRegistry([plain({ fields: { id: 'id', name: column } })]), column).toThrow(`Not a plain SQL identifier: ${column}`);
    }
  });

  it('refuses a resource registered twice and a key without a column', () => {
    expect(() => new ResourceRegistry([plain({}), plain({})])).toThrow('Resource Thing is registered twice');
    expect(() => new ResourceRegistry([plain({ key: 'code' })])).toThrow('Resource Thing: key field code has no column');
  });

  it('get, has and relation name what is unknown', () => {
    const registry = new ResourceRegistry([book, author, review, cover]);
    expect(registry.has('Book')).toBe(true);
    expect(registry.has('Shelf')).toBe(false);
    expect(() => registry.get('Shelf')).toThrow('Unknown resource Shelf');
    expect(() => registry.relation(book, 'shelf')).toThrow('Unknown relation Book.shelf');
    expect(registry.all().map((resource) => resource.name)).toEqual(['Book', 'Author', 'Review', 'Cover']);
  });

  describe('validate', () => {
    const check = (relation: Partial<RelationDefinition>, resource: Partial<ResourceDefinition> = {}) => () =>
      new ResourceRegistry([
        {
          name: 'Shelf',
          table: 'shelves',
          key: 'id',
          fields: { id: 'id' },
          relations: { books: { resource: 'Book', kind: 'many', localField: 'id', foreignField: 'shelfId', ...relation } },
          ...resource,
        },
        book,
        author,
        review,
        cover,
      ]).validate();

    it('accepts the real registry and a registry whose relations name only known resources and fields', () => {
      expect(() => serviceModel().registry.validate()).not.toThrow();
      expect(check({ orderBy: [{ field: 'id' }], present: 'publishedAt' })).not.toThrow();
    });

    it('refuses a relation to an unknown resource', () => {
      expect(check({ resource: 'Magazine' })).toThrow('Unknown resource Magazine');
    });

    it('refuses unknown local and foreign fields, naming the relation and the field', () => {
      expect(check({ localField: 'code' })).toThrow('Shelf.books: Shelf has no field code');
      expect(check({ foreignField: 'shelf' })).toThrow('Shelf.books: Book has no field shelf');
    });

    it('refuses unknown fields in the ordering and the listing field of a named list', () => {
      expect(check({ orderBy: [{ field: 'published' }] })).toThrow('Shelf.books: Book has no field published');
      expect(check({ present: 'published' })).toThrow('Shelf.books: Book has no field published');
    });

    it('regression: a root looking a resource up by an unknown field passed validate and failed every query of that root', () => {
      expect(check({}, { workspaceField: null, roots: { shelf: { argument: 'id' }, shelfByLabel: { argument: 'label', field: 'label' } } })).toThrow(
        'Shelf.roots.shelfByLabel: Shelf has no field label',
      );
      expect(check({}, { workspaceField: null, roots: { shelf: { argument: 'id' } } })).not.toThrow();
    });

    it('refuses a field of an unknown type, naming it', () => {
      expect(check({}, { fields: { id: { column: 'id', type: 'uuid' as never } } })).toThrow('Resource Shelf: field id has an unknown type uuid');
    });
  });
});
