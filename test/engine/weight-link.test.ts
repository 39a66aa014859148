// Weights over a link: a WeightsSnapshot sent by rank 0 of a two-rank host ring on loopback, received
// by an engine (InferenceEngine.receiveWeights). The engine then scores bit for bit as after
// loadWeightsFrom(trainer), each receive bumps the version, a snapshot keeps its version after the
// trainer steps on, a checkpoint folder can be the source, an engine of another shape refuses (the
// link still carries the next matching send), and a sender that goes away fails the receive
// within the link's timeout while the engine keeps its weights.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Collective } from '../../src/native/collective.js';
import { InferenceEngine } from '../../src/native/engine.js';
import { Trainer } from '../../src/native/trainer.js';
import { WeightsSnapshot } from '../../src/native/weights-snapshot.js';
import { makeCheckpoint, prompt } from './helpers.js';

let tiny: string;
let small: string;
const engines: InferenceEngine[] = [];
const links: Collective[] = [];
const sequence = { tokens: prompt(24, 3, 512), coef: new Array<number>(23).fill(1) };
const tokens = prompt(40, 5, 512);

function start(directory: string): InferenceEngine {
  const engine = InferenceEngine.load(directory, { numBlocks: 64 });
  engines.push(engine);
  return engine;
}

/** A connected two-rank host ring on loopback: [sender (rank 0), receiver (rank 1)]. */
async function link(timeoutMs = 20_000): Promise<[Collective, Collective]> {
  const sender = Collective.hostRing({ rank: 0, ranks: 2, timeoutMs, bindHost: '127.0.0.1' });
  const receiver = Collective.hostRing({ rank: 1, ranks: 2, timeoutMs, bindHost: '127.0.0.1' });
  links.push(sender, receiver);
  await Promise.all([sender.connect({ host: '127.0.0.1', port: receiver.port }), receiver.connect({ host: '127.0.0.1', port: sender.port })]);
  return [sender, receiver];
}

const same = (a: Float32Array, b: Float32Array): boolean => Buffer.from(a.buffer).equals(Buffer.from(b.buffer));

beforeAll(() => {
  tiny = makeCheckpoint('tiny', 3);
  small = makeCheckpoint('small', 4);
});

afterAll(() => {
  for (const engine of engines) engine.close();
  for (const collective of links) collective.close();
  for (const dir of [tiny, small]) fs.rmSync(dir, { recursive: true, force: true });
});

describe('weights over a link', () => {
  it('reach the engine as loadWeightsFrom(trainer) gives them, and a snapshot keeps its version', async () => {
    const trainer = Trainer.open(tiny, { lr: 1e-2, threads: 2 });
    await trainer.accumulate('sft', [sequence]);
    trainer.step();
    const snapshot = WeightsSnapshot.ofTrainer(trainer);
    const reference = start(tiny);
    reference.loadWeightsFrom(trainer);
    const expected = await reference.score(tokens);

    // The trainer moves on; the snapshot still holds the first step's weights.
    await trainer.accumulate('sft', [sequence]);
    trainer.step();
    const engine = start(tiny);
    const initial = await engine.score(tokens);
    const [sender, receiver] = await link();
    const [sent, received] = await Promise.all([snapshot.send(sender), engine.receiveWeights(receiver)]);
    expect(received.weightsVersion).toBe(1);
    expect(sent.bytes).toBe(snapshot.bytes);
    expect(received.bytes).toBe(sent.bytes);
    const after = await engine.score(tokens);
    expect(same(after, expected)).toBe(true);
    expect(same(after, initial)).toBe(false);

    // The same link carries the next version: the trainer's current weights.
    const [, again] = await Promise.all([WeightsSnapshot.ofTrainer(trainer).send(sender), engine.receiveWeights(receiver)]);
    expect(again.weightsVersion).toBe(2);
    reference.loadWeightsFrom(trainer);
    expect(same(await engine.score(tokens), await reference.score(tokens))).toBe(true);
  });

  it('can carry a checkpoint folder\'s weights', async () => {
    // The checkpoint's bf16 tensors go as stored: the engine scores as it did on the same checkpoint.
    const engine = start(tiny);
    const before = await engine.score(tokens);
    const trainer = Trainer.open(tiny, { lr: 1e-2, threads: 2 });
    await trainer.accumulate('sft', [sequence]);
    trainer.step();
    engine.loadWeightsFrom(trainer);
    const fromFolder = WeightsSnapshot.ofCheckpoint(tiny);
    expect(fromFolder.bytes).toBeLessThan(WeightsSnapshot.ofTrainer(trainer).bytes);
    const [sender, receiver] = await link();
    await Promise.all([fromFolder.send(sender), engine.receiveWeights(receiver)]);
    expect(same(await engine.score(tokens), before)).toBe(true);
    expect(fromFolder.shape).toMatch(/^\{hidden \d+, layers \d+/);
  });

  it('is refused by an engine of another shape before the payload, and the link stays usable', async () => {
    const wrong = start(small);
    const right = start(tiny);
    const snapshot = WeightsSnapshot.ofCheckpoint(tiny);
    const [sender, receiver] = await link();
    const [sent, received] = await Promise.allSettled([snapshot.send(sender), wrong.receiveWeights(receiver)]);
    expect(sent.status).toBe('rejected');
    expect((sent as PromiseRejectedResult).reason.message).toMatch(/the receiver refused the weights before they were sent: its model is not \{hidden/);
    expect(received.status).toBe('rejected');
    expect((received as PromiseRejectedResult).reason.message).toMatch(/the sender's model is \{hidden .*; this engine's is \{hidden/);
    expect(wrong.stats().policyVersion).toBe(0);
    const [, ok] = await Promise.all([snapshot.send(sender), right.receiveWeights(receiver)]);
    expect(ok.weightsVersion).toBe(1);
  });

  it('fails the receive within the timeout when the sender goes away, and the engine keeps its weights', async () => {
    const engine = start(tiny);
    const before = await engine.score(tokens);
    const [sender, receiver] = await link(1500);
    const started = Date.now();
    const pending = engine.receiveWeights(receiver);
    setTimeout(() => sender.close(), 200);
    await expect(pending).rejects.toThrow(/cannot receive new weights over host ring, rank 1 of 2/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(engine.stats().policyVersion).toBe(0);
    expect(same(await engine.score(tokens), before)).toBe(true);
  });

  it('refuses a sender on rank 1 and a receiver on rank 0', async () => {
    const engine = start(tiny);
    const [sender, receiver] = await link();
    await expect(engine.receiveWeights(sender)).rejects.toThrow(/rank 0 of a weight link is the sender/);
    await expect(WeightsSnapshot.ofCheckpoint(tiny).send(receiver)).rejects.toThrow(/the sender is rank 0 of a weight link, not rank 1/);
  });
});
