/**
 * Bad input from an operator, a fixture or an internal client: the message says what is wrong and
 * nothing is written. `field` names the input it is about, as the caller named it (`--allow-ip`
 * at the CLI, `allowedIps` in GraphQL), when it is about one.
 */
export class InputError extends Error {
  readonly field: string | undefined;

  constructor(message: string, options?: { field?: string | undefined }) {
    super(message);
    this.name = 'InputError';
    this.field = options?.field;
  }
}

export function isInputError(error: unknown): error is InputError {
  return error instanceof InputError;
}
