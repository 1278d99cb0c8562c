/** A malformed byte sequence: says what was wrong and at which byte offset. */
export class ParseError extends Error {
  constructor(
    readonly what: string,
    readonly offset: number,
  ) {
    super(`${what} at offset ${offset}`);
    this.name = 'ParseError';
  }
}
