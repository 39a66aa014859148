// distributed/share-codec.ts: a share's micro-batches survive the binary form with every field, as
// the Int32/Float32 values Trainer.accumulate would make of them; cut or padded buffers are refused.
import { describe, expect, it } from 'vitest';
import { decodeShare, encodeShare } from '../../src/distributed/share-codec.js';
import type { TrainSequence } from '../../src/native/trainer.js';

const f32 = (xs: number[]): number[] => Array.from(new Float32Array(xs));

describe('share codec', () => {
  it('round-trips every field, values as Float32', () => {
    const full: TrainSequence = {
      tokens: [5, 151643, 7],
      coef: [0.1, 1 / 3],
      oldLogprobs: [-1.5, -2.25],
      draws: { tokens: [1, 2, -1, 4], logprobs: [-0.5, -0.75, 0, -3.1] },
      refLogprobs: [-1.2, -2.2],
      klWeight: [0, 0.125],
    };
    const plain: TrainSequence = { tokens: [9, 8, 7, 6], coef: [1, 0.5, 0] };
    const decoded = decodeShare(encodeShare([[full, plain], [], [plain]]));
    expect(decoded).toEqual([
      [
        { tokens: full.tokens, coef: f32([0.1, 1 / 3]), oldLogprobs: f32([-1.5, -2.25]), draws: { tokens: [1, 2, -1, 4], logprobs: f32([-0.5, -0.75, 0, -3.1]) }, refLogprobs: f32([-1.2, -2.2]), klWeight: [0, 0.125] },
        plain,
      ],
      [],
      [plain],
    ]);
    expect(decodeShare(encodeShare([]))).toEqual([]);
  });

  it('refuses a cut or padded buffer', () => {
    const bytes = encodeShare([[{ tokens: [1, 2, 3], coef: [1, 1] }]]);
    expect(() => decodeShare(bytes.subarray(0, bytes.length - 4))).toThrow(/cut short/);
    expect(() => decodeShare(Buffer.concat([bytes, Buffer.alloc(4)]))).toThrow(/left over/);
    expect(() => decodeShare(Buffer.alloc(2))).toThrow(/fewer than 4 bytes/);
  });
});
