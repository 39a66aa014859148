// StretchEncoder must give exactly tokenizer.encode(text) whatever the text, markers included.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StretchEncoder } from '../../src/policy/stretch-encoder.js';
import { qwen3Tokenizer } from '../harness/helpers.js';

const tokenizer = qwen3Tokenizer();
const MARKERS = ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>', '<think>', '</think>'];

describe('StretchEncoder', () => {
  it('equals tokenizer.encode on chat-like text with markers, unicode and whitespace (fast-check)', () => {
    const encoder = new StretchEncoder({ tokenizer, maxCachedStretches: 16 });
    const part = fc.oneof(fc.constantFrom(...MARKERS, '\n', ' ', '\n\n', '{"room": "R4821"}', 'é', '七十三', '<|im', '</tool'), fc.string(), fc.string({ unit: 'grapheme' }));
    fc.assert(
      fc.property(fc.array(part, { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        expect(encoder.encode(text)).toEqual(tokenizer.encode(text));
      }),
      { numRuns: 400 },
    );
  });

  it('reports each stretch with its character range', () => {
    const stretches = new StretchEncoder({ tokenizer, maxCachedStretches: 16 }).split('<|im_start|>user\nhi<|im_end|>');
    expect(stretches.map((stretch) => [stretch.start, stretch.end, tokenizer.decode([...stretch.tokens])])).toEqual([
      [0, 12, '<|im_start|>'],
      [12, 19, 'user\nhi'],
      [19, 29, '<|im_end|>'],
    ]);
  });
});
