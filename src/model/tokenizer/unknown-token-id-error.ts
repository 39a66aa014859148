// The error raised when a token id outside the tokenizer's vocabulary is decoded.

import { SwarmError } from '../../errors.js';

/** What the error reports. */
export interface UnknownTokenIdErrorOptions {
  /** The offending id. */
  id: number;
  /** The tokenizer's number of ids. */
  vocabSize: number;
  /** The tokenizer file. */
  source: string;
}

/** A token id that the tokenizer has no token for. */
export class UnknownTokenIdError extends SwarmError {
  /** The offending id. */
  readonly id: number;

  constructor(options: UnknownTokenIdErrorOptions) {
    super(
      `token id ${options.id} is not in the tokenizer ${options.source}; expected an integer id of a ` +
        `vocabulary or added token in 0..${options.vocabSize - 1} (embedding rows past the tokenizer's ` +
        'tokens are padding and have no text)',
    );
    this.id = options.id;
  }
}
