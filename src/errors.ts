// The error classes of s³: one base class and one subclass per kind of failure, each with an
// actionable message naming the file, the field, the value and what was expected.

/** Base class of every error s³ raises on purpose. */
export class SwarmError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A config, preset or command-line value that is malformed or out of range. */
export class ConfigError extends SwarmError {}

/** A checkpoint, tokenizer or data file that cannot be read or does not match what was expected. */
export class FormatError extends SwarmError {}

/** The native addon could not be loaded or refused a request. */
export class NativeError extends SwarmError {}

/** A data-parallel trainer rank or the rendezvous failed (the message names the rank and the wait); the run stops and --resume continues it. */
export class DistributedError extends SwarmError {}
