/**
 * How many distinct statements one process prepares by name. The data layer's statements are
 * generated from the registry, one per selection shape, so a process meets a bounded set of them;
 * past this bound (many ad hoc internal GraphQL selections) statements are sent unnamed again,
 * so that no connection keeps an ever-growing set of prepared statements.
 */
const MAX_NAMED_STATEMENTS = 500;

/**
 * Names for the statements of `queryArrays`. A named statement is parsed and planned once per
 * connection (PostgreSQL then settles on a generic plan), where an unnamed one is parsed and
 * planned on every execution: for the listing statements that is most of the database's work.
 */
export class StatementNames {
  readonly #names = new Map<string, string>();

  nameOf(text: string): string | undefined {
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < MAX_NAMED_STATEMENTS) {
      name = `svc_${this.#names.size + 1}`;
      this.#names.set(text, name);
    }
    return name;
  }
}
