// Decoding a response piece by piece: characters split across pieces decode whole, unknown ids
// decode to U+FFFD, and a new response starts clean.

import { describe, expect, it } from 'vitest';
import { ResponseDecoder } from '../../src/harness/response-decoder.js';
import { qwen3Tokenizer } from './helpers.js';

const tokenizer = qwen3Tokenizer();

describe('ResponseDecoder', () => {
  it('decodes a character whose bytes are split across two pieces once it is complete', () => {
    // '𠀋' is three byte-level tokens in Qwen3's vocabulary; cut the response after the first.
    const ids = tokenizer.encode('ok 𠀋 café');
    const split = ids.findIndex((_, index) => tokenizer.decode(ids.slice(0, index + 1)).includes('\ufffd'));
    expect(split).toBeGreaterThanOrEqual(0);
    const decoder = new ResponseDecoder(tokenizer);
    const first = decoder.push(ids.slice(0, split + 1));
    const second = decoder.push(ids.slice(split + 1));
    expect(first).toBe('ok ');
    expect(second).toBe('𠀋 café');
    expect(decoder.text).toBe('ok 𠀋 café');
  });

  it('decodes an id the tokenizer does not know as U+FFFD', () => {
    const decoder = new ResponseDecoder(tokenizer);
    expect(decoder.push([...tokenizer.encode('a'), tokenizer.vocabSize + 5, ...tokenizer.encode('b')])).toBe('a\ufffdb');
  });

  it('starts a new response empty, dropping an unfinished character', () => {
    const decoder = new ResponseDecoder(tokenizer);
    const ids = tokenizer.encode('𠀋');
    decoder.push(ids.slice(0, Math.max(1, ids.length - 1)));
    decoder.reset();
    expect(decoder.push(tokenizer.encode('ok'))).toBe('ok');
    expect(decoder.text).toBe('ok');
  });
});
