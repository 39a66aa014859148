// Decoding an agent's response as its pieces arrive, without ever throwing: a model may sample an id
// the tokenizer does not know (a padding row of the embedding), which decodes to U+FFFD as an invalid
// byte would. Decoding streams across pieces, so a character split between two pieces decodes whole;
// bytes of a character still incomplete are held back until the next piece completes it.

import type { Tokenizer } from '../model/tokenizer/tokenizer.js';

const REPLACEMENT = new Uint8Array([0xef, 0xbf, 0xbd]);
const EMPTY = new Uint8Array(0);

/** Per tokenizer: the text of each id seen so far whose bytes are plain ASCII, or null for any other id. */
const asciiTextByTokenizer = new WeakMap<Tokenizer, Map<number, string | null>>();

function asciiTextOf(tokenizer: Tokenizer): Map<number, string | null> {
  let texts = asciiTextByTokenizer.get(tokenizer);
  if (texts === undefined) {
    texts = new Map();
    asciiTextByTokenizer.set(tokenizer, texts);
  }
  return texts;
}

/** The response text so far, decoded piece by piece. */
export class ResponseDecoder {
  /** Everything decoded since the response began. */
  text = '';
  /** Bytes of a character that the last piece left unfinished. */
  private carry: Uint8Array = EMPTY;

  /** A decoder over `tokenizer`'s vocabulary. */
  constructor(private readonly tokenizer: Tokenizer) {}

  /** Decodes one piece's ids, adds the text to the response and returns it. */
  push(ids: readonly number[]): string {
    const text = this.carry.length === 0 ? this.asciiText(ids) : null;
    const decoded = text ?? this.decodeBytes(ids);
    this.text += decoded;
    return decoded;
  }

  /** The text of a piece made only of ASCII tokens (one character per byte), or null. */
  private asciiText(ids: readonly number[]): string | null {
    const texts = asciiTextOf(this.tokenizer);
    let joined = '';
    for (const id of ids) {
      let text = texts.get(id);
      if (text === undefined) {
        const bytes = this.bytesOf(id);
        text = bytes !== REPLACEMENT && bytes.every((byte) => byte < 0x80) ? String.fromCharCode(...bytes) : null;
        texts.set(id, text);
      }
      if (text === null) return null;
      joined += text;
    }
    return joined;
  }

  /** Decodes the bytes of the carry and the ids, holding back an unfinished trailing character. */
  private decodeBytes(ids: readonly number[]): string {
    let size = this.carry.length;
    for (const id of ids) size += this.bytesOf(id).length;
    const joined = new Uint8Array(size);
    joined.set(this.carry, 0);
    let offset = this.carry.length;
    for (const id of ids) {
      const bytes = this.bytesOf(id);
      joined.set(bytes, offset);
      offset += bytes.length;
    }
    const complete = completeLength(joined);
    this.carry = complete === size ? EMPTY : joined.slice(complete);
    return utf8.decode(joined.subarray(0, complete));
  }

  private bytesOf(id: number): Uint8Array {
    try {
      return this.tokenizer.tokenBytes(id);
    } catch {
      return REPLACEMENT;
    }
  }

  /** Starts a new response (bytes of an unfinished character are dropped). */
  reset(): void {
    this.carry = EMPTY;
    this.text = '';
  }
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** Bytes up to the start of a trailing UTF-8 character whose continuation bytes have not come yet. */
function completeLength(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(4, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back];
    if ((byte & 0xc0) === 0x80) continue;
    const expected = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return expected > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}
