// engineSizing: a model policy's engine keeps the engine's 1 GiB cache and 64 sequences a step on
// the CPU, takes half the free device memory and 256 sequences on CUDA, and given values (a train
// config's rolloutKvCacheBytes and rolloutMaxSequences) override either, the device's memory then
// not asked. deviceMemory() refuses where there is no CUDA device.
import { describe, expect, it } from 'vitest';
import { NativeError } from '../../src/errors.js';
import { deviceMemory, resolveDevice } from '../../src/native/device.js';
import { engineSizing } from '../../src/policy/engine-sizing.js';

const never = (): number => {
  throw new Error('the device memory was asked');
};

describe('engineSizing', () => {
  it('keeps the engine\'s cache and 64 sequences a step on the CPU', () => {
    expect(engineSizing('cpu', {}, never)).toEqual({ maxSequences: 64 });
    expect(engineSizing('cpu', { kvCacheBytes: null, maxSequences: null }, never)).toEqual({ maxSequences: 64 });
  });

  it('takes half the free device memory and 256 sequences a step on CUDA', () => {
    let asked = 0;
    const sizing = engineSizing('cuda', {}, () => {
      asked += 1;
      return 100 * 2 ** 30 + 1;
    });
    expect(sizing).toEqual({ maxSequences: 256, kvCacheBytes: 50 * 2 ** 30 });
    expect(asked).toBe(1);
  });

  it('takes given values instead, on either device', () => {
    const given = { kvCacheBytes: 3 * 2 ** 30, maxSequences: 32 };
    expect(engineSizing('cuda', given, never)).toEqual(given);
    expect(engineSizing('cpu', given, never)).toEqual(given);
    expect(engineSizing('cpu', { maxSequences: 8 }, never)).toEqual({ maxSequences: 8 });
    expect(engineSizing('cuda', { kvCacheBytes: 2 ** 30 }, never)).toEqual({ maxSequences: 256, kvCacheBytes: 2 ** 30 });
  });
});

describe.runIf(resolveDevice('auto') === 'cpu')('deviceMemory without a CUDA device', () => {
  it('refuses with the reason', () => {
    expect(() => deviceMemory()).toThrow(NativeError);
    expect(() => deviceMemory()).toThrow(/cuda|CUDA/);
  });
});
