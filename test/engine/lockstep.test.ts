// The deterministic engine (lockstep with JavaScript, docs/determinism.md) against JavaScript whose
// reactions take varying time: agents generate pieces of different lengths and each piece that ends
// posts a "message" token to the next agent, appended after that agent's current piece (as the
// harness appends notifications). Each reaction busy-waits a random 0–6 ms first. Where a message
// lands depends on how far the engine got meanwhile, so a free-running engine's histories follow
// the waits; the lockstep engine's must be the same for any waits.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../../src/common/random.js';
import { InferenceEngine } from '../../src/native/engine.js';
import { makeCheckpoint, prompt } from './helpers.js';

let directory: string;

beforeAll(() => {
  directory = makeCheckpoint('tiny', 21);
});

afterAll(() => {
  fs.rmSync(directory, { recursive: true, force: true });
});

const AGENTS = 5;
const PIECES = 6;

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // JavaScript's own work, taking time in the reaction itself.
  }
}

/** Every agent's whole history after the exchange, and the engine's steps. */
async function exchange(deterministic: boolean, waitSeed: number): Promise<{ histories: number[][]; steps: number }> {
  const engine = InferenceEngine.load(directory, { maxContext: 512, maxSequences: 3, maxBatchTokens: 32, deterministic });
  const waits = createRng(`lockstep-test/${waitSeed}`);
  try {
    const vocab = engine.stats().vocabSize;
    const histories = Array.from({ length: AGENTS }, (_, i) => prompt(9 + 4 * i, i, vocab));
    const inbox: number[][] = Array.from({ length: AGENTS }, () => []);
    const sequences = histories.map((history) => {
      const sequence = engine.openSequence();
      engine.append(sequence, history);
      return sequence;
    });
    const agent = async (i: number): Promise<void> => {
      for (let piece = 0; piece < PIECES; piece += 1) {
        const result = await engine.generate(sequences[i], { maxNew: 3 + 2 * i, stopTokenIds: [], temperature: 1, seed: BigInt(i + 1) });
        busyWait(waits.nextInt(7));
        histories[i].push(...result.tokens);
        inbox[(i + 1) % AGENTS].push(200 + i);
        // Delivered after the piece: what reached this agent while it generated.
        const unread = inbox[i].splice(0);
        if (unread.length > 0) {
          engine.append(sequences[i], unread);
          histories[i].push(...unread);
        }
      }
    };
    await Promise.all(histories.map((_, i) => agent(i)));
    return { histories, steps: engine.stats().steps };
  } finally {
    engine.close();
  }
}

describe('deterministic engine', () => {
  it('gives the same histories however long JavaScript takes to react', async () => {
    const first = await exchange(true, 1);
    for (const seed of [2, 3]) expect(await exchange(true, seed)).toEqual(first);
    // Every message reached its recipient (the histories hold them), with the sampled tokens around them.
    for (const history of first.histories) expect(history.filter((id) => id >= 200 && id < 200 + AGENTS).length).toBeGreaterThan(0);
  }, 60_000);

  it('starts no step before JavaScript has finished the turn that queued the requests', async () => {
    const engine = InferenceEngine.load(directory, { maxContext: 256 });
    try {
      const sequence = engine.openSequence();
      engine.append(sequence, prompt(8, 1, engine.stats().vocabSize));
      const piece = engine.generate(sequence, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 1n });
      busyWait(30);
      expect(engine.stats().steps).toBe(0);
      expect((await piece).tokens).toHaveLength(4);
      expect(engine.stats().turns).toBe(1);
    } finally {
      engine.close();
    }
  });

  it('holds its steps while hold() is in force, and goes on once released', async () => {
    const engine = InferenceEngine.load(directory, { maxContext: 256 });
    try {
      const sequence = engine.openSequence();
      engine.append(sequence, prompt(8, 2, engine.stats().vocabSize));
      const release = engine.hold();
      const piece = engine.generate(sequence, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 1n });
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(engine.stats().steps).toBe(0);
      release();
      expect((await piece).tokens).toHaveLength(4);
    } finally {
      engine.close();
    }
  });

  it('is the default, and a free-running engine follows the timing instead (--nondeterministic)', async () => {
    const engine = InferenceEngine.load(directory, { maxContext: 256 });
    expect(engine.deterministic).toBe(true);
    engine.close();
    // With waits much longer than a tiny model's step the free engine runs ahead of the messages.
    const lockstep = await exchange(true, 1);
    const free = [];
    for (const seed of [1, 2, 3]) free.push(await exchange(false, seed));
    expect(free.some((run) => JSON.stringify(run.histories) !== JSON.stringify(lockstep.histories))).toBe(true);
  }, 60_000);
});
