// Tests of the Tokenizer on small hand-written tokenizer.json files: encoding, added tokens,
// decoding (whole, as bytes, streaming) and the errors raised for files it cannot read.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FormatError } from '../../src/errors.js';
import {
  BYTE_LEVEL_ORDER,
  BYTE_TO_CHAR,
  QWEN3_SPLIT_PATTERN,
  StreamingDecoder,
  Tokenizer,
  UnknownTokenIdError,
  type TokenizerJson,
} from '../../src/model/tokenizer/index.js';

const MERGES: Array<[string, string]> = [
  ['h', 'e'],
  ['l', 'l'],
  ['he', 'll'],
  ['hell', 'o'],
  ['Ġ', 'w'],
  ['o', 'r'],
  ['o', 'Ġ'],
];

function makeJson(): TokenizerJson {
  const vocab: Record<string, number> = {};
  for (const byte of BYTE_LEVEL_ORDER) vocab[BYTE_TO_CHAR[byte]] = Object.keys(vocab).length;
  for (const [left, right] of MERGES) vocab[left + right] ??= Object.keys(vocab).length;
  const next = Object.keys(vocab).length;
  const added = (id: number, content: string, special: boolean) => ({
    id, content, special, normalized: false, single_word: false, lstrip: false, rstrip: false,
  });
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false } as const;
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [added(next, '<|end|>', true), added(next + 1, '<x>', false), added(next + 2, '<x>y', false)],
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [{ type: 'Split', pattern: { Regex: QWEN3_SPLIT_PATTERN }, behavior: 'Isolated', invert: false }, byteLevel],
    },
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: MERGES.map(([left, right]) => [left, right]),
    },
  };
}

const tokenizer = Tokenizer.fromJson(makeJson(), 'small.json');
const spell = (ids: number[]) => ids.map((id) => tokenizer.idToToken(id));

function loadError(edit: (json: TokenizerJson & Record<string, unknown>) => void): FormatError {
  const json = makeJson() as TokenizerJson & Record<string, unknown>;
  edit(json);
  try {
    Tokenizer.fromJson(json, 'edited.json');
  } catch (error) {
    expect(error).toBeInstanceOf(FormatError);
    expect((error as Error).message).toContain('edited.json');
    return error as FormatError;
  }
  throw new Error('expected the edited tokenizer.json to be refused');
}

describe('Tokenizer.encode', () => {
  it('splits with the regex, then merges bytes by rank', () => {
    expect(spell(tokenizer.encode('hello world'))).toEqual(['hello', 'Ġw', 'or', 'l', 'd']);
    expect(tokenizer.encode('')).toEqual([]);
  });

  it('gives the same ids from its per-word cache', () => {
    const text = 'hello hello world hello';
    expect(tokenizer.encode(text)).toEqual(tokenizer.encode(text));
    expect(spell(tokenizer.encode(text))).toEqual(['hello', 'Ġ', 'hello', 'Ġw', 'or', 'l', 'd', 'Ġ', 'hello']);
  });

  it('splits added tokens out first, longest first, and never merges them', () => {
    expect(spell(tokenizer.encode('hello<|end|>hello'))).toEqual(['hello', '<|end|>', 'hello']);
    expect(spell(tokenizer.encode('<x>y<x>z'))).toEqual(['<x>y', '<x>', 'z']);
  });

  it('normalizes to NFC outside added tokens', () => {
    expect(tokenizer.encode('e\u0301')).toEqual(tokenizer.encode('\u00e9'));
    expect(tokenizer.decode(tokenizer.encode('e\u0301'))).toBe('\u00e9');
  });

  it('matches a normalized added token after NFC and a raw one only verbatim', () => {
    const json = makeJson();
    json.added_tokens.push({ ...json.added_tokens[1], id: json.added_tokens[2].id + 1, content: '\u00e9!', normalized: true });
    json.added_tokens.push({ ...json.added_tokens[1], id: json.added_tokens[2].id + 2, content: 'a\u0301?', normalized: false });
    const withAccents = Tokenizer.fromJson(json, 'accents.json');
    const accented = withAccents.tokenToId('\u00e9!') as number;
    const raw = withAccents.tokenToId('a\u0301?') as number;
    expect(withAccents.encode('e\u0301!')).toEqual([accented]);
    expect(withAccents.encode('a\u0301?')).toEqual([raw]);
    expect(withAccents.encode('\u00e1?')).not.toContain(raw);
  });

  it('reads merges written as "left right" strings like pairs', () => {
    const json = makeJson();
    json.model.merges = MERGES.map(([left, right]) => `${left} ${right}`);
    expect(Tokenizer.fromJson(json, 'strings.json').encode('hello world')).toEqual(tokenizer.encode('hello world'));
  });

  it('skips the merges for a whole-vocabulary word when ignore_merges is set', () => {
    const json = makeJson();
    json.model.vocab.xyz = Object.keys(json.model.vocab).length + 10;
    expect(spell(Tokenizer.fromJson(json, 'a.json').encode('xyz'))).toEqual(['x', 'y', 'z']);
    json.model.ignore_merges = true;
    const ignoring = Tokenizer.fromJson(json, 'b.json');
    expect(ignoring.encode('xyz').map((id) => ignoring.idToToken(id))).toEqual(['xyz']);
  });

  it('applies GPT-2\'s regex for a ByteLevel pre-tokenizer with use_regex, and none without', () => {
    const json = makeJson();
    json.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
    expect(spell(Tokenizer.fromJson(json, 'whole.json').encode('o o'))).toEqual(['oĠ', 'o']);
    json.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true };
    expect(spell(Tokenizer.fromJson(json, 'gpt2.json').encode('o o'))).toEqual(['o', 'Ġ', 'o']);
  });
});

describe('Tokenizer lookups', () => {
  it('maps tokens and ids both ways and counts every id', () => {
    const end = tokenizer.tokenToId('<|end|>') as number;
    expect(tokenizer.idToToken(end)).toBe('<|end|>');
    expect(tokenizer.tokenToId('hello')).toBe(tokenizer.encode('hello')[0]);
    expect(tokenizer.tokenToId('nope')).toBeUndefined();
    expect(tokenizer.idToToken(-1)).toBeUndefined();
    expect(tokenizer.vocabSize).toBe(256 + MERGES.length + 3);
    expect([...tokenizer.specialTokens.keys()]).toEqual(['<|end|>']);
    expect([...tokenizer.addedTokens.keys()]).toEqual(['<|end|>', '<x>', '<x>y']);
  });
});

describe('Tokenizer decoding', () => {
  it('decodes byte tokens and added tokens back to text, keeping a leading U+FEFF', () => {
    const text = '\ufeffhello <|end|> wörld 👍🏽\r\n\u0085';
    expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
  });

  it('returns raw bytes for a prefix that ends inside a character', () => {
    const ids = tokenizer.encode('é');
    expect(ids).toHaveLength(2);
    expect([...tokenizer.decodeBytes(ids.slice(0, 1))]).toEqual([0xc3]);
    expect(tokenizer.decode(ids.slice(0, 1))).toBe('\ufffd');
  });

  it('streams text without splitting characters', () => {
    const text = 'a😀é中 <|end|>';
    const decoder = new StreamingDecoder(tokenizer);
    const pieces = tokenizer.encode(text).map((id) => decoder.push([id]));
    expect(pieces.join('') + decoder.finish()).toBe(text);
    expect(pieces.some((piece) => piece.includes('\ufffd'))).toBe(false);
    expect(pieces[1]).toBe('');
  });

  it('flushes an incomplete character as U+FFFD at the end of a stream', () => {
    const decoder = new StreamingDecoder(tokenizer);
    expect(decoder.push(tokenizer.encode('中').slice(0, 2))).toBe('');
    expect(decoder.finish()).toBe('\ufffd');
  });

  it('refuses ids outside the vocabulary', () => {
    expect(() => tokenizer.decode([tokenizer.vocabSize])).toThrow(UnknownTokenIdError);
    expect(() => tokenizer.decode([1.5])).toThrow(/not in the tokenizer small\.json/);
  });
});

describe('Tokenizer.fromJson validation', () => {
  it('refuses a model that is not BPE', () => {
    expect(loadError((json) => ((json.model as { type: string }).type = 'WordPiece')).message).toMatch(/model\.type/);
  });

  it('refuses a vocabulary without all 256 byte tokens', () => {
    expect(loadError((json) => delete json.model.vocab.q).message).toMatch(/lacks the byte token "q"/);
  });

  it('refuses merges of tokens missing from the vocabulary', () => {
    expect(loadError((json) => json.model.merges.unshift(['zz', 'q'])).message).toMatch(/model\.merges\[0\]/);
  });

  it('refuses added tokens that strip whitespace', () => {
    expect(loadError((json) => (json.added_tokens[0].lstrip = true)).message).toMatch(/added_tokens\[0\]\.lstrip/);
  });

  it('refuses an added token whose id belongs to another vocabulary token', () => {
    expect(loadError((json) => (json.added_tokens[0].id = 5)).message).toMatch(/already gives to/);
  });

  it('refuses normalizers other than NFC', () => {
    expect(loadError((json) => (json.normalizer = { type: 'Lowercase' } as never)).message).toMatch(/normalizer\.type/);
  });

  it('refuses a split regex it cannot translate, naming the field', () => {
    const error = loadError((json) => {
      const sequence = json.pre_tokenizer as { pretokenizers: Array<{ pattern: { Regex: string } }> };
      sequence.pretokenizers[0].pattern.Regex = '\\w+';
    });
    expect(error.message).toContain('pre_tokenizer.pretokenizers[0].pattern.Regex');
  });

  it('refuses a post-processor that would add tokens', () => {
    expect(loadError((json) => (json.post_processor = { type: 'TemplateProcessing' } as never)).message).toMatch(/post_processor\.type/);
  });
});

describe('Tokenizer.fromFile', () => {
  const folder = mkdtempSync(join(tmpdir(), 's3-tokenizer-'));

  it('loads a tokenizer.json from disk', () => {
    const path = join(folder, 'tokenizer.json');
    writeFileSync(path, JSON.stringify(makeJson()));
    const loaded = Tokenizer.fromFile(path);
    expect(loaded.source).toBe(path);
    expect(loaded.encode('hello world')).toEqual(tokenizer.encode('hello world'));
  });

  it('names the file when it is missing or not JSON', () => {
    expect(() => Tokenizer.fromFile(join(folder, 'missing.json'))).toThrow(/missing\.json/);
    const broken = join(folder, 'broken.json');
    writeFileSync(broken, '{"model": ');
    expect(() => Tokenizer.fromFile(broken)).toThrow(FormatError);
    expect(() => Tokenizer.fromFile(broken)).toThrow(/broken\.json is not valid JSON/);
  });
});
