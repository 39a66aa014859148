// Tests of the s3-mini BPE trainer: determinism, size, tie-breaking, Qwen3 format compatibility
// (the output must encode identically in s³'s Tokenizer and in @huggingface/tokenizers) and speed.
import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { QWEN3_ADDED_TOKENS, Tokenizer, trainByteLevelBpe } from '../../src/model/tokenizer/index.js';

const ONES = 'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(' ');
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const numberWord = (n: number) => (n < 20 ? ONES[n] : TENS[Math.floor(n / 10)] + (n % 10 ? `-${ONES[n % 10]}` : ''));

// A deterministic stand-in for the task corpus: number words, room labels and tool calls.
function syntheticCorpus(count: number): string[] {
  let state = 12345;
  const next = (limit: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % limit;
  };
  return Array.from({ length: count }, () => {
    const number = 1 + next(99);
    const room = `R${1000 + next(9000)}`;
    return (
      `<|im_start|>assistant\n<think>\nMy private number is ${numberWord(number)} (${number}). I am in room ${room}.\n</think>\n\n` +
      `<tool_call>\n{"name": "move", "arguments": {"room": "${room}"}}\n</tool_call><|im_end|>\n` +
      `<|im_start|>user\n<tool_response>\nYou see doors to R${1000 + next(9000)} and R${1000 + next(9000)}.\n</tool_response><|im_end|>\n`
    );
  });
}

const corpus = syntheticCorpus(2000);
const trained = trainByteLevelBpe({ corpus, vocabSize: 600 });
const tokenizer = Tokenizer.fromJson(trained, 'trained');
const library = new LibraryTokenizer(trained, {});
const libraryEncode = (text: string): number[] => library.encode(text, { add_special_tokens: false }).ids;

describe('trainByteLevelBpe', () => {
  it('produces byte-identical JSON from the same corpus', () => {
    expect(JSON.stringify(trainByteLevelBpe({ corpus, vocabSize: 600 }))).toBe(JSON.stringify(trained));
  });

  it('stays within the requested vocabulary, ids contiguous from 0', () => {
    const ids = [...Object.values(trained.model.vocab), ...trained.added_tokens.map((token) => token.id)].sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, id) => id));
    expect(tokenizer.vocabSize).toBe(ids.length);
    expect(ids.length).toBeLessThanOrEqual(600);
  });

  it('fills a vocabulary smaller than the corpus could use exactly', () => {
    const small = trainByteLevelBpe({ corpus, vocabSize: 300 });
    expect(Object.keys(small.model.vocab).length + small.added_tokens.length).toBe(300);
    expect(small.model.merges).toHaveLength(300 - 256 - QWEN3_ADDED_TOKENS.length);
  });

  it('places Qwen3\'s added tokens after the BPE vocabulary in Qwen3\'s order', () => {
    const first = Object.keys(trained.model.vocab).length;
    expect(trained.added_tokens.map(({ id, content, special }) => ({ id, content, special }))).toEqual(
      QWEN3_ADDED_TOKENS.map((token, index) => ({ id: first + index, ...token })),
    );
    expect(tokenizer.encode('<|im_start|>assistant\n<think>')).toEqual(
      expect.arrayContaining([tokenizer.tokenToId('<|im_start|>'), tokenizer.tokenToId('<think>')]),
    );
  });

  it('makes frequent words into few tokens', () => {
    expect(tokenizer.encode(' forty-two').length).toBeLessThanOrEqual(2);
    // 13 pre-tokens ({", name, ":, ␠", move, …): each became a single token.
    expect(tokenizer.encode('{"name": "move", "arguments": {"room": "')).toHaveLength(13);
    const tokensPerChar = tokenizer.encode(corpus[0]).length / corpus[0].length;
    expect(tokensPerChar).toBeLessThan(0.35);
  });

  it('encodes like @huggingface/tokenizers on the corpus and on random unicode', () => {
    for (const text of corpus.slice(0, 200)) expect(tokenizer.encode(text)).toEqual(libraryEncode(text));
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ maxLength: 30 }), (random, ascii) => {
        const text = `${random} forty-two R4821 ${ascii}<think>`;
        expect(tokenizer.encode(text)).toEqual(libraryEncode(text));
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('round-trips any unicode through its byte tokens', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        expect(tokenizer.decode(tokenizer.encode(text))).toBe(text.normalize('NFC'));
      }),
      { numRuns: 300, seed: 8 },
    );
  });

  it('breaks count ties by the spelling of the left, then the right token', () => {
    const result = trainByteLevelBpe({ corpus: ['ab cd', 'ab cd'], vocabSize: 4096 });
    expect(result.model.merges).toEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['Ġ', 'cd'],
    ]);
  });

  it('stops when no pair occurs twice, and learns nothing from added tokens', () => {
    expect(trainByteLevelBpe({ corpus: ['abc'], vocabSize: 4096 }).model.merges).toEqual([]);
    expect(trainByteLevelBpe({ corpus: Array(50).fill('<think></think><|im_end|>'), vocabSize: 4096 }).model.merges).toEqual([]);
  });

  it('accepts other added tokens', () => {
    const result = trainByteLevelBpe({ corpus: ['hi <eos>'], vocabSize: 300, addedTokens: [{ content: '<eos>', special: true }] });
    expect(result.added_tokens.map(({ id, content }) => [id, content])).toEqual([[256, '<eos>']]);
  });

  it('refuses a vocabulary too small for the byte and added tokens', () => {
    expect(() => trainByteLevelBpe({ corpus, vocabSize: 256 + QWEN3_ADDED_TOKENS.length - 1 })).toThrow(ConfigError);
    expect(() => trainByteLevelBpe({ corpus, vocabSize: 1000.5 })).toThrow(/vocabSize is 1000.5/);
  });

  it('trains a 4,096-token vocabulary on megabytes of varied text in seconds', () => {
    // Pseudo-words from syllables give hundreds of thousands of distinct words, so every merge slot fills.
    const syllables = 'ka ri to mu se na lo pe vi du ga ze ho bi ru fa ny qu xo wa el an or is ut st ch th'.split(' ');
    let state = 99;
    const next = (limit: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return (state >>> 8) % limit;
    };
    const word = () => Array.from({ length: 1 + next(4) }, () => syllables[next(syllables.length)]).join('');
    const big = syntheticCorpus(6000).map((text, index) => {
      const prose = Array.from({ length: 40 }, () => word()).join(' ');
      return `${text}${prose}. Agent ${index % 16} says ${numberWord(index % 100)}.\n`;
    });
    const characters = big.reduce((total, text) => total + text.length, 0);
    const start = performance.now();
    const result = trainByteLevelBpe({ corpus: big, vocabSize: 4096 });
    const seconds = (performance.now() - start) / 1000;
    console.log(`trainByteLevelBpe: ${(characters / 1e6).toFixed(2)} M chars, ${result.model.merges.length} merges in ${seconds.toFixed(2)} s`);
    expect(characters).toBeGreaterThan(2_000_000);
    expect(Object.keys(result.model.vocab).length + result.added_tokens.length).toBe(4096);
    expect(seconds).toBeLessThan(20);
  });
});
