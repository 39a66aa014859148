// InferenceEngine.loadWeightsFrom(trainer): the trainer's weights reach the engine without a file.
// After a trainer step, the engine scores bit for bit as it does after loading the checkpoint the
// trainer saves; each swap bumps the version; a trainer of another shape, a busy trainer and an
// object that is not a trainer are refused, and the engine keeps serving its current weights.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceEngine } from '../../src/native/engine.js';
import { Trainer } from '../../src/native/trainer.js';
import { makeCheckpoint, prompt } from './helpers.js';

let tiny: string;
let small: string;
let work: string;
const engines: InferenceEngine[] = [];
const sequence = { tokens: prompt(24, 3, 512), coef: new Array<number>(23).fill(1) };

function start(directory: string): InferenceEngine {
  const engine = InferenceEngine.load(directory, { numBlocks: 64 });
  engines.push(engine);
  return engine;
}

/** A trainer on `directory` after one SFT step, so its weights differ from the checkpoint's. */
async function trainedOnce(directory: string): Promise<Trainer> {
  const trainer = Trainer.open(directory, { lr: 1e-2, threads: 2 });
  await trainer.accumulate('sft', [sequence]);
  trainer.step();
  return trainer;
}

beforeAll(() => {
  tiny = makeCheckpoint('tiny', 3);
  small = makeCheckpoint('small', 4);
  work = fs.mkdtempSync(path.join(os.tmpdir(), 's3-trainer-weights-'));
});

afterAll(() => {
  for (const engine of engines) engine.close();
  for (const dir of [tiny, small, work]) fs.rmSync(dir, { recursive: true, force: true });
});

describe('InferenceEngine.loadWeightsFrom', () => {
  it('scores bit for bit as the checkpoint the trainer saves, and bumps the version', async () => {
    const trainer = await trainedOnce(tiny);
    const saved = path.join(work, 'step-1');
    trainer.save(saved);
    const engine = start(tiny);
    const tokens = prompt(40, 5, 512);
    const initial = await engine.score(tokens);
    expect(engine.loadWeights(saved)).toBe(1);
    const fromFile = await engine.score(tokens);
    expect(engine.loadWeightsFrom(trainer)).toBe(2);
    const fromTrainer = await engine.score(tokens);
    expect(engine.stats().policyVersion).toBe(2);
    expect(Buffer.from(fromTrainer.buffer).equals(Buffer.from(fromFile.buffer))).toBe(true);
    expect(Buffer.from(fromTrainer.buffer).equals(Buffer.from(initial.buffer))).toBe(false);
  });

  it('refuses a trainer of another shape, naming both, and keeps serving the current weights', async () => {
    const engine = start(tiny);
    const tokens = prompt(20, 6, 512);
    const before = await engine.score(tokens);
    const trainer = Trainer.open(small, { threads: 2 });
    expect(() => engine.loadWeightsFrom(trainer)).toThrow(/hidden 256.*hidden 64/);
    expect(engine.stats().policyVersion).toBe(0);
    expect(Array.from(await engine.score(tokens))).toEqual(Array.from(before));
  });

  it('refuses a trainer that is accumulating, and anything that is not a trainer', async () => {
    const engine = start(tiny);
    const trainer = Trainer.open(tiny, { threads: 2 });
    const running = trainer.accumulate('sft', [sequence]);
    expect(() => engine.loadWeightsFrom(trainer)).toThrow(/an accumulate or an all-reduce is still running/);
    await running;
    expect(engine.loadWeightsFrom(trainer)).toBe(1);
    const impostor = { nativeHandle: {}, directory: 'nowhere' } as unknown as Trainer;
    expect(() => engine.loadWeightsFrom(impostor)).toThrow(/must be a native Trainer/);
    // The engine thread applies a swap before its next batch; a score is that batch.
    await engine.score(prompt(20, 7, 512));
    expect(engine.stats().policyVersion).toBe(1);
  });
});
