// distributed/trainer-group.ts with real trainers on the CPU, ranks 1… spawned as `swarm
// trainer-worker` processes over the host ring: a batch's micro-batches shared over 2 and 3 ranks
// give one trainer's update over the whole batch (within rounding), every rank the same parameters
// (the fingerprints checked at the step), also with a rank that has nothing to accumulate and only
// sums; the same group twice gives the same bits; a rank killed mid-run fails the next update naming
// it, within seconds, not the timeout.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SWARM_CLI } from '../../src/distributed/local-ranks.js';
import { TrainerGroup } from '../../src/distributed/trainer-group.js';
import { Trainer, type TrainSequence } from '../../src/native/trainer.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 's3-dp-'));
const model = path.join(work, 'tiny');
const options = { lr: 1e-3, threads: 1, device: 'cpu' as const };

/** Five micro-batches of two SFT sequences each. */
const micros: TrainSequence[][] = Array.from({ length: 5 }, (_, i) =>
  [0, 1].map((j) => {
    const tokens = Array.from({ length: 8 + i + j }, (_, t) => (i * 131 + j * 17 + t * 29) % 512);
    return { tokens, coef: tokens.slice(1).map((_, t) => 0.1 + ((t + i) % 4) / 10) };
  }),
);

/** Micro-batch i to rank i mod R. */
const roundRobin = <T,>(items: readonly T[], ranks: number): T[][] => Array.from({ length: ranks }, (_, r) => items.filter((_, i) => i % ranks === r));

async function openGroup(ranks: number): Promise<TrainerGroup> {
  return TrainerGroup.open({
    trainer: Trainer.open(model, options),
    checkpoint: model,
    trainerOptions: options,
    worldSize: ranks,
    device: 'cpu',
    rendezvous: { host: '127.0.0.1', port: 0, advertise: '127.0.0.1' },
    launch: { kind: 'local' },
    timeoutMs: 60_000,
  });
}

function maxDifference(a: Trainer, b: Trainer): number {
  const ta = a.tensors();
  const tb = b.tensors();
  let worst = 0;
  ta.forEach((t, i) => t.data.forEach((x, k) => (worst = Math.max(worst, Math.abs(x - (tb[i]?.data[k] as number))))));
  return worst;
}

describe('TrainerGroup (data parallel on the CPU)', () => {
  beforeAll(() => {
    execFileSync(process.execPath, [SWARM_CLI, 'model', 'init', '--shape', 'tiny', '--seed', '11', '--dtype', 'f32', '--out', model]);
  });

  it('deals micro-batches over the ranks and takes one trainer’s update, the same on every rank', async () => {
    const single = Trainer.open(model, options);
    for (const micro of micros) await single.accumulate('sft', micro);
    const singleStep = single.step();
    // Round robin over 2 and 3 ranks, and a rank with nothing to accumulate (it only sums).
    for (const [ranks, deal] of [[2, roundRobin], [3, roundRobin], [2, (items: readonly TrainSequence[][]) => [items.slice(), []]]] as const) {
      const group = await openGroup(ranks);
      try {
        expect(group.description).toBe(`${ranks} ranks (host ring)`);
        const shares = deal(micros, ranks);
        const parts = await group.accumulateShares('sft', shares, { sum: true });
        expect(parts.map((p) => p.tokens)).toEqual(shares.flat().map((m) => m.reduce((n, s) => n + s.coef.length, 0)));
        const step = await group.step({ verifyFingerprints: true });
        expect(step.step).toBe(1);
        expect(Math.abs(step.gradNorm - singleStep.gradNorm)).toBeLessThan(1e-5 * singleStep.gradNorm);
        expect(maxDifference(group.trainer, single)).toBeLessThan(1e-5);
        expect(group.trainer.parameterFingerprint()).not.toBe(Trainer.open(model, options).parameterFingerprint());
      } finally {
        await group.close();
      }
    }
  });

  it('gives the same bits run to run', async () => {
    const fingerprints: string[] = [];
    for (let run = 0; run < 2; run++) {
      const group = await openGroup(2);
      try {
        await group.accumulateShares('sft', roundRobin(micros, group.ranks), { sum: true });
        await group.step({ verifyFingerprints: true });
        await group.accumulateShares('sft', roundRobin(micros.slice(0, 3), group.ranks), { sum: true });
        await group.step({ verifyFingerprints: true });
        fingerprints.push(group.trainer.parameterFingerprint());
      } finally {
        await group.close();
      }
    }
    expect(fingerprints[1]).toBe(fingerprints[0]);
  });

  it('fails the next update naming a rank that was killed, at once', async () => {
    const group = await openGroup(2);
    try {
      await group.accumulateShares('sft', roundRobin(micros, group.ranks), { sum: true });
      await group.step({ verifyFingerprints: false });
      process.kill(group.localRankPids[0] as number, 'SIGKILL');
      const started = Date.now();
      await expect(group.accumulateShares('sft', roundRobin(micros, group.ranks), { sum: true })).rejects.toThrow(/rank 1/);
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      await group.close();
    }
  });
});
