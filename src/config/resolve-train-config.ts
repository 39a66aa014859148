// Resolves the config of one `swarm train` run: a preset, then a JSON config file over it, then the
// command-line flags (--model, --out, --learner, then each --set in order), validated at every step
// and once more as a whole. Records where each setting came from, for the dry-run plan and errors.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { isTaskModulePath } from '../tasks/load-task.js';
import { parseConfigOverride } from './config-overrides.js';
import { checkFieldValue, validatePartialConfig, validateTrainConfig } from './validate-train-config.js';
import { readPath, writePath } from './config-path.js';
import { configField } from './train-config-fields.js';
import { DEFAULT_TRAIN_PRESET, trainPreset } from './train-presets.js';
import type { TrainConfig } from './train-config.js';

/** Where a setting's value came from. */
export type SettingSource = 'preset' | 'file' | 'flag';

/** What `resolveTrainConfig` reads. */
export interface ResolveTrainConfigOptions {
  /** Preset name (--preset); else the config file's `preset`; else mini. */
  preset?: string;
  /** A JSON config file (--config): optional `preset` plus any fields of the config. */
  configFile?: string;
  /** `path.to.field=value` overrides (--set), applied last, in order. */
  sets?: readonly string[];
  /** Model folder (--model). */
  model?: string;
  /** Run directory (--out). */
  out?: string;
  /** Learner (--learner). */
  learner?: string;
}

/** A resolved config with the preset it started from and the source of every setting that was changed. */
export interface ResolvedTrainConfig {
  readonly presetName: string;
  readonly config: TrainConfig;
  /** Source by field path (a null group by its own path); paths not listed come from the preset. */
  readonly sources: Readonly<Record<string, SettingSource>>;
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`config file ${file} cannot be read: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${file} must hold a JSON object of settings, got ${JSON.stringify(parsed)}.`);
  }
  return parsed as Record<string, unknown>;
}

/** Resolves and validates a train config; throws a ConfigError naming the file or flag, the field, the value and what was expected. */
export function resolveTrainConfig(options: ResolveTrainConfigOptions): ResolvedTrainConfig {
  const fileSettings = options.configFile === undefined ? undefined : readConfigFile(options.configFile);
  const fileOrigin = `config file ${options.configFile ?? ''}`;
  let presetName = options.preset ?? DEFAULT_TRAIN_PRESET;
  let presetOrigin = '--preset';
  if (fileSettings !== undefined && Object.hasOwn(fileSettings, 'preset')) {
    const named = fileSettings.preset;
    delete fileSettings.preset;
    if (typeof named !== 'string') throw new ConfigError(`${fileOrigin}: preset must be a preset name, got ${JSON.stringify(named)}.`);
    if (options.preset === undefined) {
      presetName = named;
      presetOrigin = `${fileOrigin}: preset`;
    }
  }
  const config = trainPreset(presetName, presetOrigin);
  const record = config as unknown as Record<string, unknown>;
  const sources: Record<string, SettingSource> = {};
  const origins: Record<string, string> = {};

  const apply = (path: string, value: unknown, source: SettingSource, origin: string): void => {
    writePath(record, path, value);
    sources[path] = source;
    origins[path] = origin;
  };

  if (fileSettings !== undefined) {
    for (const path of validatePartialConfig(fileSettings, fileOrigin)) {
      apply(path, readPath(fileSettings, path), 'file', fileOrigin);
    }
  }
  const flags: [string, string | undefined, string][] = [
    ['model.directory', options.model, '--model'],
    ['out', options.out, '--out'],
    ['learner', options.learner, '--learner'],
  ];
  for (const [path, value, flag] of flags) {
    if (value === undefined) continue;
    const field = configField(path);
    if (field !== undefined) checkFieldValue(field, value, flag);
    apply(path, value, 'flag', flag);
  }
  for (const assignment of options.sets ?? []) {
    const override = parseConfigOverride(assignment);
    apply(override.path, override.value, 'flag', override.origin);
  }
  const originOf = (path: string): string => {
    const group = path.split('.')[0];
    const inGroup = Object.keys(origins).find((key) => key.startsWith(`${group}.`));
    return origins[path] ?? origins[group] ?? (inGroup === undefined ? undefined : origins[inGroup]) ?? `preset "${presetName}"`;
  };
  validateTrainConfig(config, originOf);
  // A task module is recorded by its absolute path, so a resumed run finds it from anywhere.
  if (isTaskModulePath(config.task)) config.task = path.resolve(config.task);
  return { presetName, config, sources };
}
