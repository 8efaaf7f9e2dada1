/** Errors of the Go template engine. */

/**
 * A template failed to parse or execute. The message is Go's, byte for byte where Go has one
 * (`template: t:3:12: executing "t" at <.Values.Foo>: map has no entry for key "Foo"`), or names
 * the cap or the Go behaviour we refuse to imitate.
 */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
  readonly phase: 'parse' | 'exec' | 'cap' | 'unsupported';
  constructor(message: string, phase: 'parse' | 'exec' | 'cap' | 'unsupported') {
    super(message);
    this.phase = phase;
  }
}

/**
 * The error result of a Go function (or a recovered panic) as the function returns it; execution
 * reports it as `error calling NAME: MESSAGE`.
 */
export class GoError extends Error {}

/** A limit of ours was reached (output size, steps, nesting). Not an error Go would raise. */
export class CapError extends Error {}

/** A Go behaviour we refuse rather than imitate; the message says which. */
export class UnsupportedError extends Error {}
