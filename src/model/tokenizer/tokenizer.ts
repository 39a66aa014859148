// s³'s byte-level BPE tokenizer for Hugging Face tokenizer.json files (Qwen3's and s3-mini's):
// added tokens are split out first, the rest is NFC-normalized, split by the pre-tokenizer regex,
// mapped to byte tokens and merged; encoding adds no BOS. Decoding maps tokens back to bytes.

import { readFileSync } from 'node:fs';
import { FormatError } from '../../errors.js';
import { AddedTokenSplitter } from './added-token-splitter.js';
import { BpeMerger } from './bpe-merger.js';
import { BYTE_TO_CHAR, bytesToByteLevel, CHAR_TO_BYTE } from './byte-level.js';
import { preTokenize } from './pre-tokenize.js';
import { readTokenizerJson, type TokenizerSpec } from './read-tokenizer-json.js';
import { UnknownTokenIdError } from './unknown-token-id-error.js';

// Pre-tokens longer than this are encoded without caching; the cache is emptied when full.
const MAX_CACHED_PIECE_LENGTH = 256;
const MAX_CACHE_ENTRIES = 200_000;

/** A byte-level BPE tokenizer loaded from a tokenizer.json. */
export class Tokenizer {
  /** Number of token ids: one more than the largest id of the vocabulary and the added tokens. */
  readonly vocabSize: number;
  /** Special added tokens (`<|endoftext|>`, `<|im_start|>`, …) by content. */
  readonly specialTokens: ReadonlyMap<string, number>;
  /** Every added token (special or not, such as `<think>`) by content. */
  readonly addedTokens: ReadonlyMap<string, number>;
  /** Where the tokenizer was read from. */
  readonly source: string;

  private readonly spec: TokenizerSpec;
  private readonly merger: BpeMerger;
  private readonly rawSplitter: AddedTokenSplitter;
  private readonly normalizedSplitter: AddedTokenSplitter;
  private readonly byteTokenIds: Int32Array;
  private readonly idToText: Array<string | undefined>;
  private readonly addedIds: Set<number>;
  private readonly bytesById: Array<Uint8Array | undefined> = [];
  private readonly cache = new Map<string, number[]>();
  private readonly utf8 = new TextEncoder();
  private utf8Scratch = new Uint8Array(1024);

  /** Loads a tokenizer.json file. */
  static fromFile(path: string): Tokenizer {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new FormatError(`cannot read the tokenizer file ${path}: ${(error as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new FormatError(`${path} is not valid JSON (${(error as Error).message}); expected a Hugging Face tokenizer.json`);
    }
    return Tokenizer.fromJson(json, path);
  }

  /** Builds a tokenizer from a parsed tokenizer.json; `source` names it in error messages. */
  static fromJson(json: unknown, source = 'tokenizer.json'): Tokenizer {
    return new Tokenizer(readTokenizerJson(json, source));
  }

  private constructor(spec: TokenizerSpec) {
    this.spec = spec;
    this.source = spec.source;
    this.merger = new BpeMerger({ vocab: spec.vocab, merges: spec.merges, source: spec.source });
    this.byteTokenIds = Int32Array.from(BYTE_TO_CHAR, (char, byte) => {
      const id = spec.vocab.get(char);
      if (id === undefined) {
        throw new FormatError(
          `${spec.source}: model.vocab lacks the byte token ${JSON.stringify(char)} (byte ${byte}); ` +
            'a byte-level BPE vocabulary must hold all 256 byte tokens',
        );
      }
      return id;
    });
    this.idToText = [];
    for (const [token, id] of spec.vocab) this.idToText[id] = token;
    const special = new Map<string, number>();
    const added = new Map<string, number>();
    const raw = new Map<string, number>();
    const normalized = new Map<string, number>();
    for (const token of spec.addedTokens) {
      const existing = this.idToText[token.id];
      if (existing !== undefined && existing !== token.content) {
        throw new FormatError(
          `${spec.source}: added token ${JSON.stringify(token.content)} has id ${token.id}, which model.vocab ` +
            `already gives to ${JSON.stringify(existing)}; expected distinct ids`,
        );
      }
      this.idToText[token.id] = token.content;
      added.set(token.content, token.id);
      if (token.special) special.set(token.content, token.id);
      if (token.normalized && spec.nfc) normalized.set(token.content.normalize('NFC'), token.id);
      else raw.set(token.content, token.id);
    }
    this.specialTokens = special;
    this.addedTokens = added;
    this.addedIds = new Set(added.values());
    this.rawSplitter = new AddedTokenSplitter(raw);
    this.normalizedSplitter = new AddedTokenSplitter(normalized);
    this.vocabSize = this.idToText.length;
  }

  /** Encodes text to token ids (no BOS, no other tokens added). */
  encode(text: string): number[] {
    const ids: number[] = [];
    for (const segment of this.rawSplitter.split(text)) {
      if (segment.addedTokenId !== undefined) {
        ids.push(segment.addedTokenId);
        continue;
      }
      const normalizedText = this.spec.nfc ? segment.text.normalize('NFC') : segment.text;
      for (const part of this.normalizedSplitter.split(normalizedText)) {
        if (part.addedTokenId !== undefined) ids.push(part.addedTokenId);
        else for (const piece of preTokenize(part.text, this.spec.splitPatterns)) this.encodePiece(piece, ids);
      }
    }
    return ids;
  }

  private encodePiece(piece: string, ids: number[]): void {
    const cached = this.cache.get(piece);
    if (cached !== undefined) {
      for (const id of cached) ids.push(id);
      return;
    }
    if (this.utf8Scratch.length < piece.length * 3) this.utf8Scratch = new Uint8Array(piece.length * 3);
    const { written } = this.utf8.encodeInto(piece, this.utf8Scratch);
    const byteIds = new Int32Array(written);
    for (let i = 0; i < written; i++) byteIds[i] = this.byteTokenIds[this.utf8Scratch[i]];
    const whole = this.spec.ignoreMerges ? this.spec.vocab.get(bytesToByteLevel(this.utf8Scratch.subarray(0, written))) : undefined;
    const merged = whole !== undefined ? [whole] : this.merger.merge(byteIds);
    if (piece.length <= MAX_CACHED_PIECE_LENGTH) {
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.clear();
      this.cache.set(piece, merged);
    }
    for (const id of merged) ids.push(id);
  }

  /** The bytes one token stands for (an added token: its UTF-8 text); the array is shared, do not modify it. */
  tokenBytes(id: number): Uint8Array {
    const cached = this.bytesById[id];
    if (cached !== undefined) return cached;
    const text = Number.isInteger(id) ? this.idToText[id] : undefined;
    if (text === undefined) throw new UnknownTokenIdError({ id, vocabSize: this.vocabSize, source: this.source });
    let bytes: Uint8Array;
    if (this.addedIds.has(id)) bytes = this.utf8.encode(text);
    else {
      const chars = Array.from(text);
      const mapped = chars.map((char) => CHAR_TO_BYTE.get(char));
      // A vocabulary entry outside the byte alphabet decodes to its own UTF-8, as Hugging Face's decoder does.
      bytes = mapped.every((byte) => byte !== undefined) ? Uint8Array.from(mapped as number[]) : this.utf8.encode(text);
    }
    this.bytesById[id] = bytes;
    return bytes;
  }

  /** Concatenates the bytes of the tokens; a prefix of a sequence may end inside a UTF-8 character. */
  decodeBytes(ids: readonly number[]): Uint8Array {
    const parts = ids.map((id) => this.tokenBytes(id));
    const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }

  /** Decodes token ids to text; invalid UTF-8 becomes U+FFFD and a leading U+FEFF is kept. */
  decode(ids: readonly number[]): string {
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(this.decodeBytes(ids));
  }

  /** The id of a vocabulary token (byte-level spelling) or of an added token, if it exists. */
  tokenToId(token: string): number | undefined {
    return this.addedTokens.get(token) ?? this.spec.vocab.get(token);
  }

  /** The byte-level spelling of a vocabulary token or the content of an added token, if the id exists. */
  idToToken(id: number): string | undefined {
    return this.idToText[id];
  }
}
