// Tests of the seeded PRNG: sfc32 against an independent BigInt reference, determinism, forks,
// unbiased integers and shuffles.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { createRng } from '../../src/common/random.js';

/** sfc32 as PractRand writes it, in BigInt arithmetic modulo 2^32, seeded like Rng. */
function referenceOutputs(seedPath: string[], count: number): number[] {
  const digest = createHash('sha256').update(JSON.stringify(seedPath)).digest();
  const m = 0xffffffffn;
  let a = BigInt(digest.readUInt32LE(0));
  let b = BigInt(digest.readUInt32LE(4));
  let c = BigInt(digest.readUInt32LE(8));
  let counter = BigInt(digest.readUInt32LE(12));
  const step = (): number => {
    const tmp = (a + b + counter) & m;
    counter = (counter + 1n) & m;
    a = b ^ (b >> 9n);
    b = (c + (c << 3n)) & m;
    c = ((((c << 21n) & m) | (c >> 11n)) + tmp) & m;
    return Number(tmp);
  };
  for (let i = 0; i < 12; i += 1) step();
  return Array.from({ length: count }, step);
}

describe('Rng', () => {
  it('produces sfc32 outputs seeded from the SHA-256 of its seed path', () => {
    const rng = createRng('s3');
    expect(Array.from({ length: 8 }, () => rng.nextUint32())).toEqual(referenceOutputs(['s3'], 8));
    const forked = createRng('s3').fork('agent/3');
    expect(Array.from({ length: 4 }, () => forked.nextUint32())).toEqual(referenceOutputs(['s3', 'agent/3'], 4));
  });

  it('repeats a stream for the same seed and treats a number seed as its decimal string', () => {
    const first = createRng(7);
    const second = createRng('7');
    expect(Array.from({ length: 5 }, () => first.nextUint32())).toEqual(Array.from({ length: 5 }, () => second.nextUint32()));
  });

  it('gives different streams for different seeds and labels', () => {
    expect(createRng(1).nextUint32()).not.toBe(createRng(2).nextUint32());
    expect(createRng(1).fork('a').nextUint32()).not.toBe(createRng(1).fork('b').nextUint32());
  });

  it('forks independently of how much the parent has drawn', () => {
    const used = createRng('x');
    for (let i = 0; i < 100; i += 1) used.nextUint32();
    expect(used.fork('child').nextUint32()).toBe(createRng('x').fork('child').nextUint32());
  });

  it('rejects seeds that are not safe integers', () => {
    expect(() => createRng(1.5)).toThrow(ConfigError);
    expect(() => createRng(Number.NaN)).toThrow(ConfigError);
  });

  it('draws integers in range with counts close to uniform', () => {
    const rng = createRng('uniform');
    const counts = [0, 0, 0];
    for (let i = 0; i < 90_000; i += 1) counts[rng.nextInt(3)] += 1;
    for (const count of counts) expect(Math.abs(count - 30_000)).toBeLessThan(600);
    expect(createRng(1).nextInt(1)).toBe(0);
    const wide = createRng(2).nextInt(2 ** 32);
    expect(wide).toBeGreaterThanOrEqual(0);
    expect(wide).toBeLessThan(2 ** 32);
  });

  it('refuses a range that is not a positive integer up to 2^32', () => {
    const rng = createRng(1);
    for (const bad of [0, -1, 2.5, 2 ** 32 + 1, Number.NaN]) expect(() => rng.nextInt(bad)).toThrow(ConfigError);
  });

  it('shuffles into a permutation without touching the input, reaching every order', () => {
    const rng = createRng('shuffle');
    const input = ['a', 'b', 'c'] as const;
    const seen = new Map<string, number>();
    for (let i = 0; i < 6_000; i += 1) {
      const shuffled = rng.shuffle(input);
      expect([...shuffled].sort()).toEqual(['a', 'b', 'c']);
      seen.set(shuffled.join(''), (seen.get(shuffled.join('')) ?? 0) + 1);
    }
    expect(input).toEqual(['a', 'b', 'c']);
    expect(seen.size).toBe(6);
    for (const count of seen.values()) expect(Math.abs(count - 1_000)).toBeLessThan(150);
  });
});
