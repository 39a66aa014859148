// The named presets of `swarm train --preset`.
import { ConfigError } from '../errors.js';
import { MINI } from './mini-preset.js';
import { PAPER_AGGREGATION, PAPER_EXPLORATION } from './paper-presets.js';
import type { TrainConfig } from './train-config.js';

/** Every preset by name; `mini` is the default. */
export const TRAIN_PRESETS: Readonly<Record<string, TrainConfig>> = {
  mini: MINI,
  'paper-aggregation': PAPER_AGGREGATION,
  'paper-exploration': PAPER_EXPLORATION,
};

/** The preset used when none is named. */
export const DEFAULT_TRAIN_PRESET = 'mini';

/** A deep copy of the preset `name`, or a ConfigError listing the presets. */
export function trainPreset(name: string, origin = '--preset'): TrainConfig {
  const preset = Object.hasOwn(TRAIN_PRESETS, name) ? TRAIN_PRESETS[name] : undefined;
  if (preset === undefined) {
    throw new ConfigError(`${origin}: unknown preset "${name}"; expected one of ${Object.keys(TRAIN_PRESETS).join(', ')}.`);
  }
  return structuredClone(preset);
}
