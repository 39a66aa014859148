// The seeded random streams of s³: every random choice in tasks, the harness (agent names, teammate
// orders, sampling seeds) and scripted policies comes from an Rng built here, never from Math.random.
//
// Algorithm. Each stream is identified by a seed path: the seed given to createRng followed by the
// labels of every fork() on the way to it. The path is encoded as JSON and hashed with SHA-256; the
// first 16 bytes of the digest, read as four little-endian 32-bit words, become the state (a, b, c,
// counter) of sfc32 (Chris Doty-Humphrey's Small Fast Counting generator, 32-bit variant, as in
// PractRand), and the first 12 outputs are discarded to mix the state. The counter makes every
// stream's period at least 2^32. fork(label) depends only on the parent's seed path and the label,
// never on how many numbers the parent has drawn, so the order in which streams are used never
// changes what any of them produces.

import { createHash } from 'node:crypto';
import { ConfigError } from '../errors.js';

/** A seed accepted by createRng: a string, or a safe integer (treated as its decimal string). */
export type RngSeed = string | number;

/** Outputs discarded after seeding so that similar seed paths give unrelated first draws. */
const WARM_UP_OUTPUTS = 12;

/** A deterministic stream of pseudo-random numbers (sfc32 seeded from a SHA-256 of its seed path). */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private counter: number;

  /** Builds the stream for a seed path; use createRng or fork rather than calling this directly. */
  constructor(readonly seedPath: readonly string[]) {
    const digest = createHash('sha256').update(JSON.stringify(seedPath)).digest();
    this.a = digest.readUInt32LE(0);
    this.b = digest.readUInt32LE(4);
    this.c = digest.readUInt32LE(8);
    this.counter = digest.readUInt32LE(12);
    for (let i = 0; i < WARM_UP_OUTPUTS; i += 1) this.nextUint32();
  }

  /** The next integer, uniform in [0, 2^32). */
  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.counter) | 0;
    this.counter = (this.counter + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** An integer uniform in [0, maxExclusive), without modulo bias (rejection sampling). */
  nextInt(maxExclusive: number): number {
    if (!Number.isInteger(maxExclusive) || maxExclusive < 1 || maxExclusive > 2 ** 32) {
      throw new ConfigError(
        `Rng.nextInt: maxExclusive must be an integer in [1, 2^32], got ${String(maxExclusive)}.`,
      );
    }
    // Accept only draws below the largest multiple of maxExclusive that fits in 32 bits.
    const limit = 2 ** 32 - (2 ** 32 % maxExclusive);
    let draw = this.nextUint32();
    while (draw >= limit) draw = this.nextUint32();
    return draw % maxExclusive;
  }

  /** A shuffled copy of items (Fisher-Yates); the input is not modified. */
  shuffle<T>(items: readonly T[]): T[] {
    const result = items.slice();
    for (let i = result.length - 1; i > 0; i -= 1) {
      const j = this.nextInt(i + 1);
      const held = result[i];
      result[i] = result[j];
      result[j] = held;
    }
    return result;
  }

  /** An independent stream derived from this stream's seed path and label (not from its position). */
  fork(label: string): Rng {
    return new Rng([...this.seedPath, label]);
  }
}

/** Creates the stream for a seed; createRng(7) and createRng('7') are the same stream. */
export function createRng(seed: RngSeed): Rng {
  if (typeof seed === 'number' && !Number.isSafeInteger(seed)) {
    throw new ConfigError(`createRng: a numeric seed must be a safe integer, got ${String(seed)}.`);
  }
  return new Rng([String(seed)]);
}
