// rolloutEngineLimits: the rollout engine of a training run keeps the engine's 1 GiB cache and 64
// sequences a step on the CPU, takes half the free device memory and 256 sequences on CUDA, and the
// config's rolloutKvCacheBytes and rolloutMaxSequences override either (the device's memory is then
// not asked). deviceMemory() refuses where there is no CUDA device.
import { describe, expect, it } from 'vitest';
import { NativeError } from '../../src/errors.js';
import { deviceMemory, resolveDevice } from '../../src/native/device.js';
import { rolloutEngineLimits } from '../../src/rl/rollout-engine-limits.js';

const auto = { contextLength: 40960, rolloutKvCacheBytes: null, rolloutMaxSequences: null };
const never = (): number => {
  throw new Error('the device memory was asked');
};

describe('rolloutEngineLimits', () => {
  it('keeps the engine\'s cache and 64 sequences a step on the CPU', () => {
    expect(rolloutEngineLimits(auto, 'cpu', never)).toEqual({ maxContext: 40960, maxSequences: 64 });
  });

  it('takes half the free device memory and 256 sequences a step on CUDA', () => {
    let asked = 0;
    const limits = rolloutEngineLimits(auto, 'cuda', () => {
      asked += 1;
      return 100 * 2 ** 30 + 1;
    });
    expect(limits).toEqual({ maxContext: 40960, maxSequences: 256, kvCacheBytes: 50 * 2 ** 30 });
    expect(asked).toBe(1);
  });

  it('takes the config\'s cache and batch instead, on either device', () => {
    const set = { contextLength: 2048, rolloutKvCacheBytes: 3 * 2 ** 30, rolloutMaxSequences: 32 };
    expect(rolloutEngineLimits(set, 'cuda', never)).toEqual({ maxContext: 2048, maxSequences: 32, kvCacheBytes: 3 * 2 ** 30 });
    expect(rolloutEngineLimits(set, 'cpu', never)).toEqual({ maxContext: 2048, maxSequences: 32, kvCacheBytes: 3 * 2 ** 30 });
    expect(rolloutEngineLimits({ ...auto, rolloutMaxSequences: 8 }, 'cpu', never)).toEqual({ maxContext: 40960, maxSequences: 8 });
  });
});

describe.runIf(resolveDevice('auto') === 'cpu')('deviceMemory without a CUDA device', () => {
  it('refuses with the reason', () => {
    expect(() => deviceMemory()).toThrow(NativeError);
    expect(() => deviceMemory()).toThrow(/cuda|CUDA/);
  });
});
