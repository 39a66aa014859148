// The trainer options a stage adds for the ranks it spawns (src/rl/open-trainer-group.ts): CPU ranks
// spawned on this host split half of its free memory for kept activations; one rank, a launcher's
// ranks (possibly on other hosts) and CUDA ranks keep the trainer's own default.
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { MINI } from '../../src/config/mini-preset.js';
import { localRankTrainerOptions } from '../../src/rl/open-trainer-group.js';

describe('localRankTrainerOptions', () => {
  afterEach(() => {
    delete process.env.WORLD_SIZE;
    delete process.env.RANK;
    delete process.env.MASTER_ADDR;
  });

  it('gives CPU ranks spawned on this host equal shares of half the free memory', () => {
    expect(localRankTrainerOptions({ ...MINI, trainerGpus: 1 })).toEqual({});
    const before = os.freemem();
    const { activationBytes } = localRankTrainerOptions({ ...MINI, device: 'cpu', trainerGpus: 4 });
    const after = os.freemem();
    expect(activationBytes).toBeGreaterThan(0);
    // Free memory moves with the machine; the share was taken between the two readings (±128 MiB).
    expect(activationBytes).toBeGreaterThanOrEqual(Math.floor(Math.min(before, after) / 8) - 2 ** 27);
    expect(activationBytes).toBeLessThanOrEqual(Math.ceil(Math.max(before, after) / 8) + 2 ** 27);
  });

  it('leaves a launcher\'s ranks to the trainer\'s default', () => {
    Object.assign(process.env, { WORLD_SIZE: '2', RANK: '0', MASTER_ADDR: '127.0.0.1' });
    expect(localRankTrainerOptions({ ...MINI, device: 'cpu', trainerGpus: 2 })).toEqual({});
  });
});
