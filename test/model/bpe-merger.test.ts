// Tests of the heap-based BPE merge step against a plain quadratic reference, and of its pair table.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BpeMerger } from '../../src/model/tokenizer/index.js';
import { PairTable } from '../../src/model/tokenizer/pair-table.js';

// The textbook algorithm: merge the lowest-ranked adjacent pair (leftmost among equals) until none is left.
function referenceMerge(tokens: string[], merges: ReadonlyArray<readonly [string, string]>): string[] {
  const ranks = new Map(merges.map(([left, right], rank) => [`${left}\u0000${right}`, rank]));
  const word = [...tokens];
  for (;;) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i + 1 < word.length; i++) {
      const rank = ranks.get(`${word[i]}\u0000${word[i + 1]}`);
      if (rank !== undefined && rank < bestRank) {
        best = i;
        bestRank = rank;
      }
    }
    if (best < 0) return word;
    word.splice(best, 2, word[best] + word[best + 1]);
  }
}

function build(merges: ReadonlyArray<readonly [string, string]>, alphabet: string[]) {
  const vocab = new Map<string, number>();
  for (const token of [...alphabet, ...merges.flatMap(([left, right]) => [left, right, left + right])]) {
    if (!vocab.has(token)) vocab.set(token, vocab.size);
  }
  const names = [...vocab.keys()];
  const merger = new BpeMerger({ vocab, merges, source: 'test' });
  return {
    merge: (tokens: string[]) => merger.merge(tokens.map((token) => vocab.get(token) as number)).map((id) => names[id]),
  };
}

describe('BpeMerger', () => {
  it('applies the lowest-ranked merge first', () => {
    const { merge } = build(
      [
        ['b', 'c'],
        ['a', 'b'],
        ['a', 'bc'],
      ],
      ['a', 'b', 'c'],
    );
    expect(merge(['a', 'b', 'c'])).toEqual(['abc']);
    expect(merge(['a', 'b'])).toEqual(['ab']);
  });

  it('merges the leftmost of overlapping equal pairs first', () => {
    const { merge } = build([['a', 'a']], ['a']);
    expect(merge(['a', 'a', 'a'])).toEqual(['aa', 'a']);
    expect(merge(['a', 'a', 'a', 'a', 'a'])).toEqual(['aa', 'aa', 'a']);
  });

  it('returns short inputs unchanged', () => {
    const { merge } = build([['a', 'b']], ['a', 'b']);
    expect(merge([])).toEqual([]);
    expect(merge(['a'])).toEqual(['a']);
    expect(merge(['b', 'a'])).toEqual(['b', 'a']);
  });

  it('agrees with the quadratic reference on random merge tables and long words', () => {
    const alphabet = ['a', 'b', 'c', 'd'];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 30 }),
        fc.array(fc.constantFrom(...alphabet), { maxLength: 300 }),
        (choices, word) => {
          // Each rule joins two tokens that already exist (alphabet or earlier results).
          const known = [...alphabet];
          const merges: Array<[string, string]> = [];
          for (const [left, right] of choices) {
            const pair: [string, string] = [known[left % known.length], known[right % known.length]];
            merges.push(pair);
            if (!known.includes(pair[0] + pair[1])) known.push(pair[0] + pair[1]);
          }
          expect(build(merges, alphabet).merge(word)).toEqual(referenceMerge(word, merges));
        },
      ),
      { numRuns: 300, seed: 42 },
    );
  });
});

describe('PairTable', () => {
  it('stores, replaces and adds values, and reads -1 for absent pairs across growth', () => {
    const table = new PairTable(2);
    for (let left = 0; left < 100; left++) table.set(left, left * 7, left);
    table.set(3, 21, 1000);
    expect(table.add(5, 35, 2)).toBe(7);
    expect(table.add(500, 1, 4)).toBe(4);
    expect(table.size).toBe(101);
    expect(table.get(3, 21)).toBe(1000);
    expect(table.get(99, 693)).toBe(99);
    expect(table.get(21, 3)).toBe(-1);
  });
});
