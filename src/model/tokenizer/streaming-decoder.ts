// Incremental decoding for generation: token pieces arrive a few at a time and a token boundary can
// fall inside a UTF-8 character, so incomplete trailing bytes are held back until they complete.

import type { Tokenizer } from './tokenizer.js';

/** Turns a growing sequence of token ids into text without splitting characters. */
export class StreamingDecoder {
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });

  /** Creates a decoder over the given tokenizer's vocabulary. */
  constructor(private readonly tokenizer: Tokenizer) {}

  /** Decodes the next ids and returns the text that is now complete. */
  push(ids: readonly number[]): string {
    return this.decoder.decode(this.tokenizer.decodeBytes(ids), { stream: true });
  }

  /** Returns what is left (an incomplete character becomes U+FFFD) and resets for a new stream. */
  finish(): string {
    return this.decoder.decode();
  }
}
