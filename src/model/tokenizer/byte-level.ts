// The GPT-2 byte-level alphabet: the fixed bijection between the 256 byte values and 256
// printable characters that byte-level BPE vocabularies (Qwen3's included) are written in.

/**
 * The 256 byte values in the order GPT-2's `bytes_to_unicode` lists them: printable
 * Latin-1 bytes first (they map to themselves), then the rest (mapped to U+0100 upwards).
 */
export const BYTE_LEVEL_ORDER: readonly number[] = buildByteOrder();

/** The character that stands for each byte value, indexed by byte. */
export const BYTE_TO_CHAR: readonly string[] = buildByteToChar();

/** The byte value each byte-level character stands for. */
export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(
  BYTE_TO_CHAR.map((char, byte) => [char, byte]),
);

function isPrintableLatin1(byte: number): boolean {
  return (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
}

function buildByteOrder(): number[] {
  const printable: number[] = [];
  const others: number[] = [];
  for (let byte = 0; byte < 256; byte++) (isPrintableLatin1(byte) ? printable : others).push(byte);
  return [...printable, ...others];
}

function buildByteToChar(): string[] {
  const chars = new Array<string>(256);
  let shifted = 0;
  for (let byte = 0; byte < 256; byte++) {
    chars[byte] = String.fromCodePoint(isPrintableLatin1(byte) ? byte : 256 + shifted++);
  }
  return chars;
}

/** Writes UTF-8 bytes as a byte-level string (one character per byte). */
export function bytesToByteLevel(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += BYTE_TO_CHAR[byte];
  return out;
}
