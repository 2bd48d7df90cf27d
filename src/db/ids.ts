import { randomUUID } from 'node:crypto';

/** The same shape as the database's `new_id(prefix)`: a type prefix and 128 random bits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}
