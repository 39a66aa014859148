// The importance-ratio quantiles of the policy-gradient diagnostics (docs/training.md): with the
// current model's log-probs as oldLogprobs every ratio is 1; offset by a constant c every ratio is
// exp(−c), IcePop-masked or not; SFT reports all 1; and the RL loop combines micro-batches with the
// min of mins, the max of maxes and token-weighted means of the inner quantiles.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/native/addon.js';
import { Trainer, type NativeTrainDiagnostics } from '../../src/native/trainer.js';
import { weightedDiagnostics } from '../../src/rl/rl-loop.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 's3-ratio-q-'));
const model = path.join(work, 'tiny');
const tokens = [3, 9, 27, 81, 243, 217, 139, 5, 15, 45, 135, 150, 44, 132, 140, 164, 236, 452];
const fields = ['min', 'p01', 'p10', 'p50', 'p90', 'p99', 'max'] as const;

function expectOrdered(q: NativeTrainDiagnostics['ratioQuantiles']): void {
  for (let i = 1; i < fields.length; i += 1) expect(q[fields[i]]).toBeGreaterThanOrEqual(q[fields[i - 1]]);
}

describe('Trainer ratio quantiles', () => {
  let logprobs: number[];

  beforeAll(async () => {
    execFileSync(process.execPath, [swarm, 'model', 'init', '--shape', 'tiny', '--seed', '13', '--dtype', 'f32', '--out', model]);
    // The current per-token log-probs, one single-prediction sequence at a time (meanLogprob of one token).
    const trainer = Trainer.open(model, { threads: 2 });
    logprobs = [];
    for (let t = 0; t + 1 < tokens.length; t += 1) {
      logprobs.push((await trainer.accumulate('sft', [{ tokens: tokens.slice(0, t + 2), coef: tokens.slice(0, t + 1).map((_, i) => (i === t ? 1 : 0)) }])).meanLogprob);
    }
  });

  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  const coef = (): number[] => logprobs.map((_, t) => (t % 3 === 2 ? 0 : t % 2 ? 0.1 : -0.05));

  it('centres on 1 when oldLogprobs are the current log-probs', async () => {
    const trainer = Trainer.open(model, { threads: 2 });
    const d = await trainer.accumulate('pg', [{ tokens, coef: coef(), oldLogprobs: logprobs }]);
    expect(d.tokens).toBe(coef().filter((c) => c !== 0).length);
    for (const f of fields) expect(d.ratioQuantiles[f]).toBeCloseTo(1, 4);
    expectOrdered(d.ratioQuantiles);
    expect(d.meanAbsLogRatio).toBeLessThan(1e-4);
  });

  it('shifts every quantile to exp(−c) when oldLogprobs are offset by c, masked tokens included', async () => {
    const trainer = Trainer.open(model, { threads: 2 });
    for (const c of [0.5, -0.7, 2]) {
      const d = await trainer.accumulate('pg', [{ tokens, coef: coef(), oldLogprobs: logprobs.map((lp) => lp + c) }]);
      trainer.zeroGrad();
      for (const f of fields) expect(d.ratioQuantiles[f] / Math.exp(-c)).toBeCloseTo(1, 4);
      expect(d.meanRatio / Math.exp(-c)).toBeCloseTo(1, 4);
      expect(d.meanAbsLogRatio).toBeCloseTo(Math.abs(c), 4); // the sampler/trainer mismatch
      expect(d.fractionMasked).toBe(c === 2 ? 1 : 0); // e^−2 < icepopLow 0.2: every token masked, still in the quantiles
    }
  });

  it('spreads with the per-token ratios and is all 1 for SFT', async () => {
    const trainer = Trainer.open(model, { threads: 2 });
    const shifts = logprobs.map((_, t) => -2 + (4 * t) / (logprobs.length - 1)); // ratio exp(shift)
    const d = await trainer.accumulate('pg', [{ tokens, coef: coef(), oldLogprobs: logprobs.map((lp, t) => lp - shifts[t]) }]);
    const weighted = shifts.filter((_, t) => coef()[t] !== 0).map(Math.exp);
    expect(d.ratioQuantiles.min / Math.min(...weighted)).toBeCloseTo(1, 4);
    expect(d.ratioQuantiles.max / Math.max(...weighted)).toBeCloseTo(1, 4);
    expect(d.ratioQuantiles.min).toBeLessThan(0.2);
    expect(d.ratioQuantiles.max).toBeGreaterThan(5);
    expectOrdered(d.ratioQuantiles);
    const absShifts = shifts.filter((_, t) => coef()[t] !== 0).map(Math.abs);
    expect(d.meanAbsLogRatio).toBeCloseTo(absShifts.reduce((a, b) => a + b, 0) / absShifts.length, 4);
    trainer.zeroGrad();
    const sft = await trainer.accumulate('sft', [{ tokens, coef: coef().map(Math.abs) }]);
    for (const f of fields) expect(sft.ratioQuantiles[f]).toBe(1);
    expect(sft.meanAbsLogRatio).toBe(0);
  });
});

describe('weightedDiagnostics ratioQuantiles', () => {
  const part = (tokens: number, q: readonly number[]): NativeTrainDiagnostics => ({
    loss: 0,
    tokens,
    meanRatio: 1,
    meanAbsLogRatio: tokens / 100,
    fractionMasked: 0,
    meanEntropy: 0,
    meanLogprob: 0,
    centering: 0,
    meanDrawWeight: 0,
    klMean: 0,
    ratioQuantiles: { min: q[0], p01: q[1], p10: q[2], p50: q[3], p90: q[4], p99: q[5], max: q[6] },
  });

  it('takes the extremes and token-weighted means of the inner quantiles, ignoring empty micro-batches', () => {
    const d = weightedDiagnostics([part(30, [0.5, 0.6, 0.8, 1, 1.2, 1.5, 2]), part(0, [0, 0, 0, 0, 0, 0, 0]), part(10, [0.1, 0.2, 0.4, 0.9, 3, 6, 9])]);
    expect(d.ratioQuantiles.min).toBe(0.1);
    expect(d.ratioQuantiles.max).toBe(9);
    expect(d.ratioQuantiles.p01).toBeCloseTo((30 * 0.6 + 10 * 0.2) / 40, 12);
    expect(d.ratioQuantiles.p50).toBeCloseTo((30 * 1 + 10 * 0.9) / 40, 12);
    expect(d.ratioQuantiles.p99).toBeCloseTo((30 * 1.5 + 10 * 6) / 40, 12);
    expect(d.meanAbsLogRatio).toBeCloseTo((30 * 0.3 + 10 * 0.1) / 40, 12);
  });

  it('is all 0 without tokens', () => {
    expect(weightedDiagnostics([part(0, [0, 0, 0, 0, 0, 0, 0])]).ratioQuantiles).toEqual({ min: 0, p01: 0, p10: 0, p50: 0, p90: 0, p99: 0, max: 0 });
    expect(weightedDiagnostics([]).ratioQuantiles.max).toBe(0);
  });
});
