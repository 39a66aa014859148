// Configs of runs written by earlier versions, brought up to the current fields: settings added
// since get the values those runs ran with, model.reasoningRetained (recorded, never applied) is
// dropped and model.thinking becomes the thinking-on rendering they all had, and precision notes become
// the f32 those runs computed in; current configs pass unchanged.
import { describe, expect, it } from 'vitest';
import { upgradeSavedConfig } from '../../src/config/saved-config.js';
import { MINI as MINI_PRESET } from '../../src/config/mini-preset.js';
import { validateTrainConfig } from '../../src/config/validate-train-config.js';
import type { TrainConfig } from '../../src/config/train-config.js';

describe('upgradeSavedConfig', () => {
  it('leaves a current config as it is', () => {
    expect(upgradeSavedConfig(structuredClone(MINI_PRESET))).toEqual(MINI_PRESET);
  });

  it('turns an old config into one that validates, with what the old run in fact did', () => {
    const old = structuredClone(MINI_PRESET) as unknown as Record<string, unknown>;
    delete old.deterministicCollection;
    delete old.trainingTraceShare;
    old.model = { name: 's3-mini', directory: null, thinking: false, reasoningRetained: false };
    old.precision = { inference: 'FP32', training: 'FP32 throughout' };
    const upgraded = upgradeSavedConfig(old) as TrainConfig;
    expect(upgraded.model).toEqual({ name: 's3-mini', directory: null, thinking: true }); // what every such run did
    expect(upgraded.precision).toEqual({ rolloutWeights: 'f32', rolloutKvCache: 'f32', train: 'f32' });
    expect(upgraded.deterministicCollection).toBe(true);
    expect(upgraded.trainingTraceShare).toBe(1);
    expect(() => validateTrainConfig(upgraded, (field) => field)).not.toThrow();
  });

  it('passes anything that is not an object through, for the caller to refuse', () => {
    expect(upgradeSavedConfig([1])).toEqual([1]);
    expect(upgradeSavedConfig(null)).toBeNull();
  });
});
