// The KL penalty of the policy-gradient loss through the TypeScript Trainer (docs/training.md):
// klMean is the k3 estimate exp(r) − r − 1 averaged over weighted tokens, the loss gains
// β · Σ w · KL, klCoef 0 changes no gradient bit, and missing or misaligned inputs are refused.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/native/addon.js';
import { Trainer, type TrainSequence } from '../../src/native/trainer.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 's3-kl-'));
const model = path.join(work, 'tiny');
const tokens = [3, 9, 27, 81, 243, 217, 139, 5, 15];
const shifts = [0.4, -0.3, 0.2, 0, -0.5, 0.1, 0.3, -0.2]; // r_t = ref − lp

/** A pg sequence at ratio 1 whose reference log-probs sit `shifts` away from the current ones. */
function klSequence(logprobs: readonly number[]): TrainSequence {
  return {
    tokens,
    coef: shifts.map((_, t) => (t % 2 ? 0.1 : 0)),
    oldLogprobs: logprobs,
    refLogprobs: logprobs.map((lp, t) => lp + shifts[t]),
    klWeight: shifts.map(() => 1 / shifts.length),
  };
}

describe('Trainer KL penalty', () => {
  let logprobs: number[];

  beforeAll(async () => {
    execFileSync(process.execPath, [swarm, 'model', 'init', '--shape', 'tiny', '--seed', '11', '--dtype', 'f32', '--out', model]);
    // The current per-token log-probs, one single-prediction sequence at a time (meanLogprob of one token).
    const trainer = Trainer.open(model, { threads: 2 });
    logprobs = [];
    for (let t = 0; t + 1 < tokens.length; t += 1) {
      logprobs.push((await trainer.accumulate('sft', [{ tokens: tokens.slice(0, t + 2), coef: tokens.slice(0, t + 1).map((_, i) => (i === t ? 1 : 0)) }])).meanLogprob);
    }
  });

  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('reports the k3 estimate and adds β · Σ w · KL to the loss', async () => {
    const trainer = Trainer.open(model, { threads: 2 });
    const sequence = klSequence(logprobs);
    const off = await trainer.accumulate('pg', [sequence]);
    const on = await trainer.accumulate('pg', [sequence], { klCoef: 0.5 });
    const kl = shifts.map((r) => Math.exp(r) - r - 1);
    const klMean = kl.reduce((a, b) => a + b, 0) / kl.length;
    expect(off.klMean).toBe(0);
    expect(on.klMean).toBeCloseTo(klMean, 4);
    expect(on.loss - off.loss).toBeCloseTo(0.5 * klMean, 4);
    expect(on.tokens).toBe(off.tokens); // rows with coef 0 carry the penalty but are not counted as tokens
  });

  it('leaves every gradient bit unchanged at klCoef 0', async () => {
    const a = Trainer.open(model, { threads: 2 });
    const b = Trainer.open(model, { threads: 2 });
    const full = klSequence(logprobs);
    await a.accumulate('pg', [{ tokens: full.tokens, coef: full.coef, oldLogprobs: full.oldLogprobs }]);
    await b.accumulate('pg', [full], { klCoef: 0 });
    const ga = a.gradients(), gb = b.gradients();
    ga.forEach((t, i) => expect(Buffer.from(t.data.buffer).equals(Buffer.from(gb[i].data.buffer))).toBe(true));
  });

  it('refuses missing or misaligned inputs, a negative β and the SFT loss', async () => {
    const trainer = Trainer.open(model, { threads: 2 });
    const sequence = klSequence(logprobs);
    await expect(trainer.accumulate('pg', [{ ...sequence, refLogprobs: undefined }], { klCoef: 0.1 })).rejects.toThrow(/refLogprobs and klWeight/);
    await expect(trainer.accumulate('pg', [{ ...sequence, klWeight: [1] }], { klCoef: 0.1 })).rejects.toThrow(/refLogprobs and klWeight/);
    await expect(trainer.accumulate('pg', [sequence], { klCoef: -1 })).rejects.toThrow(/kl_coef/);
    await expect(trainer.accumulate('sft', [sequence], { klCoef: 0.1 })).rejects.toThrow(/policy-gradient/);
  });
});
