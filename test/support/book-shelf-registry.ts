import { ResourceRegistry, type RelationDefinition, type ResourceDefinition } from '../../src/model/resource-registry.ts';
import { PARENT_COLUMN } from '../../src/sql/sql-builder.ts';

/** A small library of resources (books on shelves, their authors, reviews and covers) for the SQL generation tests. */
// A small library: shelves hold books, books have an author, reviews and translations.
export const author: ResourceDefinition = {
  name: 'Author',
  table: 'authors',
  key: 'id',
  fields: { id: 'id', name: 'full_name', bornAt: { column: 'born_at', type: 'timestamp' } },
};

export const review: ResourceDefinition = {
  name: 'Review',
  table: 'reviews',
  key: 'id',
  fields: { id: 'id', bookId: 'book_id', stars: 'stars', status: 'status', writtenAt: { column: 'written_at', type: 'timestamp' } },
};

export const cover: ResourceDefinition = {
  name: 'Cover',
  table: 'covers',
  key: 'bookId',
  fields: { bookId: 'book_id', colour: 'colour', kind: 'kind' },
};

export const book: ResourceDefinition = {
  name: 'Book',
  table: 'books',
  key: 'id',
  fields: { id: 'id', shelfId: 'shelf_id', authorId: 'author_id', title: 'title', status: 'status', publishedAt: { column: 'published_at', type: 'timestamp' } },
  relations: {
    author: { resource: 'Author', kind: 'one', localField: 'authorId', foreignField: 'id' },
    hardCover: { resource: 'Cover', kind: 'one', localField: 'id', foreignField: 'bookId' },
    reviews: { resource: 'Review', kind: 'many', localField: 'id', foreignField: 'bookId' },
    // Not embeddable: it could return several rows.
    namesake: { resource: 'Author', kind: 'one', localField: 'title', foreignField: 'name' },
  },
};

author.relations = { books: { resource: 'Book', kind: 'many', localField: 'id', foreignField: 'authorId' } };

export const BOOK_COLUMNS = [PARENT_COLUMN, 'id', 'shelfId', 'authorId', 'title', 'status', 'publishedAt'];
export const BOOK_SELECT =
  `t.id AS "id", t.shelf_id AS "shelfId", t.author_id AS "authorId", t.title AS "title", t.status AS "status", ` +
  `(t.published_at AT TIME ZONE 'UTC')::text AS "publishedAt"`;

/** A registry in which `Shelf.books` is the relation under test, validated as createRegistry would. */
export function shelfWith(relation: Omit<RelationDefinition, 'resource' | 'kind' | 'localField' | 'foreignField'>): {
  registry: ResourceRegistry;
  relation: RelationDefinition;
} {
  const books: RelationDefinition = { resource: 'Book', kind: 'many', localField: 'id', foreignField: 'shelfId', ...relation };
  const shelf: ResourceDefinition = { name: 'Shelf', table: 'shelves', key: 'id', fields: { id: 'id', label: 'label' }, relations: { books } };
  const registry = new ResourceRegistry([shelf, book, author, review, cover]);
  registry.validate();
  return { registry, relation: books };
}
