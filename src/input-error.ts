/** Bad input from an operator or a fixture: the message says what is wrong and nothing is written. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}

export function isInputError(error: unknown): error is InputError {
  return error instanceof InputError;
}
