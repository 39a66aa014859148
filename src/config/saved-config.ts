// The config.json of a run written by an earlier version, brought up to the current fields, so
// `--resume`, `swarm eval RUN` and `swarm report RUN` keep working on it: settings added since take
// the values those runs in fact ran with, settings removed since are dropped, and settings recorded
// but not applied then take the value that was in effect.
import { isRecord } from './config-path.js';

// Settings added since, with the value a run written before them resumes with (the defaults).
// (device: the engine chose 'auto' and the trainer ran on the CPU; 'auto' now places both.)
const SETTINGS_ADDED_SINCE = {
  deterministicCollection: true, trainingTraceShare: 1, device: 'auto', trainerGpus: 1, trainerTimeoutSeconds: 600, rolloutKvCacheBytes: null, rolloutMaxSequences: null,
};

// Runs whose precision was a pair of notes (`inference`, `training`) ran in f32 throughout.
const F32_PRECISION = { rolloutWeights: 'f32', rolloutKvCache: 'f32', train: 'f32' };

/** A saved config with the fields added since filled in and the ones removed since left out; anything else unchanged. */
export function upgradeSavedConfig(value: unknown): unknown {
  if (!isRecord(value)) return value;
  const upgraded: Record<string, unknown> = { ...SETTINGS_ADDED_SINCE, ...value };
  if (isRecord(value.model) && Object.hasOwn(value.model, 'reasoningRetained')) {
    // Configs with model.reasoningRetained predate both model settings being applied: every history kept
    // all its reasoning, and every generation prompt was rendered with thinking on, whatever they said.
    const { reasoningRetained: _dropped, ...model } = value.model;
    upgraded.model = { ...model, thinking: true };
  }
  if (isRecord(value.precision) && Object.hasOwn(value.precision, 'inference') && !Object.hasOwn(value.precision, 'rolloutWeights')) {
    upgraded.precision = F32_PRECISION;
  }
  return upgraded;
}
