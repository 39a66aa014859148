// The presets: each is a complete valid config, mini names every departure from paper-aggregation,
// and an unknown name is refused.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { TRAIN_CONFIG_FIELDS } from '../../src/config/train-config-fields.js';
import { TRAIN_PRESETS, trainPreset } from '../../src/config/train-presets.js';
import { readPath } from '../../src/config/config-path.js';
import { validateTrainConfig } from '../../src/config/validate-train-config.js';

describe('train presets', () => {
  it('are complete, valid configs', () => {
    for (const [name, preset] of Object.entries(TRAIN_PRESETS)) {
      expect(() => validateTrainConfig(structuredClone(preset), () => `preset "${name}"`)).not.toThrow();
    }
  });

  it('name every field mini changes from paper-aggregation in its deviations', () => {
    const mini = TRAIN_PRESETS.mini as unknown as Record<string, unknown>;
    const paper = TRAIN_PRESETS['paper-aggregation'] as unknown as Record<string, unknown>;
    const changed = TRAIN_CONFIG_FIELDS.map((f) => f.path).filter(
      (p) => !['out', 'deviations'].includes(p) && JSON.stringify(readPath(mini, p)) !== JSON.stringify(readPath(paper, p)),
    );
    expect(changed.length).toBeGreaterThan(0);
    const deviations = TRAIN_PRESETS.mini.deviations.join('\n');
    for (const p of changed) expect([p, deviations.includes(p.split('.')[0])]).toEqual([p, true]);
  });

  it('keep mini on aggregation (numbers 1..9) with N = 4 and the paper\'s G', () => {
    expect(TRAIN_PRESETS.mini.task).toBe('aggregation-digits');
    expect(TRAIN_PRESETS.mini.teamSize).toBe(4);
    expect(TRAIN_PRESETS.mini.attemptsPerProblem).toBe(8);
  });

  it('hand out copies, so a change never reaches the preset', () => {
    trainPreset('mini').rlUpdates = 99;
    expect(TRAIN_PRESETS.mini.rlUpdates).toBe(50);
  });

  it('refuse an unknown name, listing the presets', () => {
    expect(() => trainPreset('paper')).toThrow(ConfigError);
    expect(() => trainPreset('paper')).toThrow(/unknown preset "paper"; expected one of mini, paper-aggregation, paper-exploration/);
  });
});
