// `swarm eval --run DIR`: the episode settings a training run used (its saved, validated config.json), so a
// checkpoint of the run is evaluated the way its own before/after evaluations were.
import path from 'node:path';
import type { TrainConfig } from '../config/train-config.js';
import { validateTrainConfig } from '../config/validate-train-config.js';
import type { EpisodeSettingsOverrides } from '../harness/episode-settings.js';
import { RunDirectory } from '../rl/run-directory.js';
import { trainingEpisodeSettings } from '../rl/train-pipeline.js';

/** The task, episode settings and evaluation temperature of a run directory. */
export interface RunEpisodeSettings {
  readonly task: string;
  readonly settings: EpisodeSettingsOverrides;
  readonly temperature: number;
}

/** Reads RUN_DIR/config.json; a malformed one is refused with the file and the field. */
export function runEpisodeSettings(runDirectory: string): RunEpisodeSettings {
  const file = path.join(runDirectory, 'config.json');
  const config = validateTrainConfig(RunDirectory.readConfig(runDirectory) as TrainConfig, (field) => `${file}${field === '' ? '' : ` (${field})`}`);
  return { task: config.task, settings: trainingEpisodeSettings(config), temperature: config.evaluation.temperature };
}
