// Validation of a parsed tokenizer.json into the plain facts the byte-level BPE tokenizer runs on:
// vocabulary, merges, added tokens, whether to apply NFC and the split regexes. Every unsupported
// field is refused here, before any encoding, with the file, the field and the value named.

import { FormatError } from '../../errors.js';
import { compileSplitPattern } from './split-pattern.js';

/** An added token as the tokenizer uses it. */
export interface AddedTokenSpec {
  /** Token id. */
  id: number;
  /** Exact text matched in the input. */
  content: string;
  /** Whether it is a control token such as `<|im_end|>`. */
  special: boolean;
  /** Whether it is matched after normalization (true) or in the raw text (false). */
  normalized: boolean;
}

/** Everything a byte-level BPE tokenizer needs, validated. */
export interface TokenizerSpec {
  /** The file (or label) the spec was read from. */
  source: string;
  /** Byte-level token string to id, added tokens excluded. */
  vocab: Map<string, number>;
  /** Merge rules in priority order (index = rank). */
  merges: Array<readonly [string, string]>;
  /** Whether a pre-token found whole in the vocabulary skips the merges. */
  ignoreMerges: boolean;
  /** Tokens split out of the text before pre-tokenization. */
  addedTokens: AddedTokenSpec[];
  /** Whether text is NFC-normalized before pre-tokenization. */
  nfc: boolean;
  /** Split regexes applied one after another (each splits the pieces of the previous). */
  splitPatterns: RegExp[];
}

// GPT-2's regex, which a ByteLevel pre-tokenizer with use_regex true applies.
const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

type JsonObject = Record<string, unknown>;

class JsonReader {
  constructor(readonly source: string) {}

  fail(field: string, value: unknown, expected: string): never {
    const shown = JSON.stringify(value) ?? String(value);
    throw new FormatError(
      `${this.source}: ${field} is ${shown.length > 120 ? `${shown.slice(0, 120)}…` : shown}; expected ${expected}`,
    );
  }

  object(value: unknown, field: string): JsonObject {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(field, value, 'an object');
    return value as JsonObject;
  }

  array(value: unknown, field: string): unknown[] {
    if (!Array.isArray(value)) this.fail(field, value, 'an array');
    return value;
  }

  string(value: unknown, field: string): string {
    if (typeof value !== 'string') this.fail(field, value, 'a string');
    return value;
  }

  falsy(value: unknown, field: string, expected: string): void {
    if (value !== undefined && value !== null && value !== false && value !== '') this.fail(field, value, expected);
  }
}

/** Validates a parsed tokenizer.json (byte-level BPE) and extracts what encoding needs. */
export function readTokenizerJson(json: unknown, source: string): TokenizerSpec {
  const reader = new JsonReader(source);
  const root = reader.object(json, 'the top level');
  const model = reader.object(root.model, 'model');
  if (model.type !== 'BPE') reader.fail('model.type', model.type, '"BPE" (s³ reads byte-level BPE tokenizers only)');
  reader.falsy(model.dropout, 'model.dropout', 'null (BPE dropout is not supported)');
  reader.falsy(model.continuing_subword_prefix, 'model.continuing_subword_prefix', 'null for a byte-level BPE');
  reader.falsy(model.end_of_word_suffix, 'model.end_of_word_suffix', 'null for a byte-level BPE');
  reader.falsy(model.byte_fallback, 'model.byte_fallback', 'false for a byte-level BPE');
  const vocab = readVocab(reader, model.vocab);
  const splitPatterns: RegExp[] = [];
  readPreTokenizer(reader, root.pre_tokenizer, 'pre_tokenizer', splitPatterns);
  readByteLevelSection(reader, root.decoder, 'decoder', false);
  readByteLevelSection(reader, root.post_processor, 'post_processor', true);
  return {
    source,
    vocab,
    merges: readMerges(reader, model.merges, vocab),
    ignoreMerges: model.ignore_merges === true,
    addedTokens: readAddedTokens(reader, root.added_tokens ?? []),
    nfc: readNormalizer(reader, root.normalizer, 'normalizer'),
    splitPatterns,
  };
}

function readVocab(reader: JsonReader, value: unknown): Map<string, number> {
  const vocab = new Map<string, number>();
  for (const [token, id] of Object.entries(reader.object(value, 'model.vocab'))) {
    if (!Number.isInteger(id) || (id as number) < 0) reader.fail(`model.vocab[${JSON.stringify(token)}]`, id, 'a non-negative integer id');
    vocab.set(token, id as number);
  }
  return vocab;
}

function readMerges(reader: JsonReader, value: unknown, vocab: Map<string, number>): Array<readonly [string, string]> {
  return reader.array(value, 'model.merges').map((entry, rank) => {
    const field = `model.merges[${rank}]`;
    const pair = typeof entry === 'string' ? entry.split(' ') : entry;
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
      reader.fail(field, entry, 'a pair ["left", "right"] or a string "left right"');
    }
    const [left, right] = pair as [string, string];
    for (const token of [left, right, left + right]) {
      if (!vocab.has(token)) reader.fail(field, entry, `tokens that are in model.vocab (${JSON.stringify(token)} is not)`);
    }
    return [left, right] as const;
  });
}

function readAddedTokens(reader: JsonReader, value: unknown): AddedTokenSpec[] {
  return reader.array(value, 'added_tokens').map((entry, index) => {
    const field = `added_tokens[${index}]`;
    const token = reader.object(entry, field);
    if (!Number.isInteger(token.id) || (token.id as number) < 0) reader.fail(`${field}.id`, token.id, 'a non-negative integer');
    const content = reader.string(token.content, `${field}.content`);
    if (content === '') reader.fail(`${field}.content`, content, 'a non-empty string');
    for (const flag of ['single_word', 'lstrip', 'rstrip'] as const) {
      reader.falsy(token[flag], `${field}.${flag}`, 'false (s³ matches added tokens exactly)');
    }
    return { id: token.id as number, content, special: token.special === true, normalized: token.normalized === true };
  });
}

function readNormalizer(reader: JsonReader, value: unknown, field: string): boolean {
  if (value === null || value === undefined) return false;
  const normalizer = reader.object(value, field);
  if (normalizer.type === 'NFC') return true;
  if (normalizer.type === 'Sequence') {
    const parts = reader.array(normalizer.normalizers, `${field}.normalizers`);
    return parts.map((part, index) => readNormalizer(reader, part, `${field}.normalizers[${index}]`)).includes(true);
  }
  return reader.fail(`${field}.type`, normalizer.type, '"NFC" or a "Sequence" of NFC (other normalizers are not supported)');
}

function readPreTokenizer(reader: JsonReader, value: unknown, field: string, patterns: RegExp[]): void {
  const preTokenizer = reader.object(value, field);
  if (preTokenizer.type === 'Sequence') {
    const parts = reader.array(preTokenizer.pretokenizers, `${field}.pretokenizers`);
    parts.forEach((part, index) => readPreTokenizer(reader, part, `${field}.pretokenizers[${index}]`, patterns));
    return;
  }
  if (preTokenizer.type === 'ByteLevel') {
    reader.falsy(preTokenizer.add_prefix_space, `${field}.add_prefix_space`, 'false');
    if (preTokenizer.use_regex !== false) patterns.push(compileSplitPattern({ pattern: GPT2_PATTERN, source: reader.source, field }));
    return;
  }
  if (preTokenizer.type !== 'Split') reader.fail(`${field}.type`, preTokenizer.type, '"Split", "ByteLevel" or "Sequence"');
  if (preTokenizer.behavior !== 'Isolated') reader.fail(`${field}.behavior`, preTokenizer.behavior, '"Isolated"');
  reader.falsy(preTokenizer.invert, `${field}.invert`, 'false');
  const pattern = reader.object(preTokenizer.pattern, `${field}.pattern`);
  if (typeof pattern.Regex === 'string') {
    patterns.push(compileSplitPattern({ pattern: pattern.Regex, source: reader.source, field: `${field}.pattern.Regex` }));
  } else {
    const literal = reader.string(pattern.String, `${field}.pattern.String`);
    if (literal === '') reader.fail(`${field}.pattern.String`, literal, 'a non-empty string');
    patterns.push(new RegExp(literal.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'), 'gu'));
  }
}

function readByteLevelSection(reader: JsonReader, value: unknown, field: string, optional: boolean): void {
  if (optional && (value === null || value === undefined)) return;
  const section = reader.object(value, field);
  if (section.type !== 'ByteLevel') {
    reader.fail(`${field}.type`, section.type, `"ByteLevel"${optional ? ' or null' : ''} (s³ reads byte-level BPE tokenizers only)`);
  }
}
