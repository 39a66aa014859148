// distributed/deal-sequences.ts: sequences go to the least-loaded rank (ties low), shares keep the
// batch's order, one rank takes everything as it is.
import { describe, expect, it } from 'vitest';
import { dealSequences } from '../../src/distributed/deal-sequences.js';

const seq = (n: number, id: string): { tokens: number[]; id: string } => ({ tokens: new Array<number>(n).fill(0), id });

describe('dealSequences', () => {
  it('balances tokens over the ranks, deterministically and in order', () => {
    const batch = [seq(10, 'a'), seq(3, 'b'), seq(4, 'c'), seq(8, 'd'), seq(1, 'e')];
    expect(dealSequences(batch, 2).map((s) => s.map((x) => x.id))).toEqual([['a', 'e'], ['b', 'c', 'd']]);
    expect(dealSequences(batch, 3).map((s) => s.map((x) => x.id))).toEqual([['a'], ['b', 'd'], ['c', 'e']]);
    expect(dealSequences(batch, 1)).toEqual([batch]);
    expect(dealSequences([], 2)).toEqual([[], []]);
  });
});
