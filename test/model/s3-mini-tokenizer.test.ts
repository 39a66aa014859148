// The shipped s3-mini tokenizer: exactly what the build script produces from the task corpus,
// in Qwen3's format (loads in our tokenizer and in @huggingface/tokenizers alike), small, and
// fitted to the task text.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { buildS3MiniTokenizerJson } from '../../src/tools/s3-mini-corpus.js';
import { builtinTokenizerPath, loadBuiltinTokenizer, S3_MINI_VOCAB_SIZE } from '../../src/model/s3-mini-tokenizer.js';
import { numberToWords } from '../../src/tasks/index.js';

describe('the s3-mini tokenizer', () => {
  const tokenizer = loadBuiltinTokenizer();

  it('is byte-identical to a fresh build from the scripted-episode corpus', async () => {
    expect(await buildS3MiniTokenizerJson()).toBe(fs.readFileSync(builtinTokenizerPath(), 'utf8'));
  }, 120_000);

  it('has at most 4,096 ids and all of Qwen3 chat special tokens', () => {
    expect(tokenizer.vocabSize).toBeLessThanOrEqual(S3_MINI_VOCAB_SIZE);
    for (const special of ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>', '<think>', '</think>']) {
      expect(tokenizer.tokenToId(special), special).toBeDefined();
    }
  });

  it('encodes exactly like @huggingface/tokenizers and round-trips any text', () => {
    const json = JSON.parse(fs.readFileSync(builtinTokenizerPath(), 'utf8'));
    const reference = new HfTokenizer(json, {});
    const samples = [
      '<|im_start|>assistant\n<think>\nI have two numbers.\n</think>\n\n<tool_call>\n{"name": "move", "arguments": {"room": "R4821"}}\n</tool_call><|im_end|>',
      '#### [3, 17, 42, 42]',
      'Unseen text: Ünïcödé, 漢字, emoji 🙂, tabs\tand\r\nnewlines.',
    ];
    for (const text of samples) {
      expect(tokenizer.encode(text)).toEqual(reference.encode(text).ids);
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    }
  });

  it('turns number words and tool-call JSON into few tokens', () => {
    for (let value = 1; value <= 99; value += 1) expect(tokenizer.encode(` ${numberToWords(value)}`).length, numberToWords(value)).toBeLessThanOrEqual(3);
    for (const call of ['{"name": "read_messages", "arguments": {}}', '{"name": "move", "arguments": {"room": "R4821"}}']) {
      // Qwen3's pre-tokenizer splits digits one by one, so room labels cost a token per digit.
      const digits = call.replace(/\D/g, '').length;
      expect(tokenizer.encode(call).length - digits, call).toBeLessThanOrEqual(call.length / 3);
    }
  });
});
