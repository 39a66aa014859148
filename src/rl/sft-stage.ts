// The SFT stage of a config (Appendix L), shared by `swarm train` and `swarm sft`: scripted
// demonstrations of the config's task with its episode settings (team variant with messaging, or
// the solo variant), SFT updates on a trainer opened from the initial model (data parallel over
// config.trainerGpus ranks or a launcher's, src/distributed/), and the result written
// as a plain Hugging Face folder with the tokenizer (no optimizer state: RL starts a fresh one).
import fs from 'node:fs';
import path from 'node:path';
import type { TrainConfig, SftConfig } from '../config/train-config.js';
import { ConfigError } from '../errors.js';
import type { EpisodeSettingsOverrides } from '../harness/episode-settings.js';
import { IM_START } from '../model/chat/chat-markers.js';
import { Tokenizer } from '../model/tokenizer/index.js';
import { Trainer } from '../native/trainer.js';
import type { NativeTrainerOptions } from '../native/binding.js';
import { localRankTrainerOptions, openTrainerGroup } from './open-trainer-group.js';
import { scriptedDemonstrations } from './demonstrations.js';
import { runSft, type SftUpdate } from './sft.js';

/** Options of runSftStage. */
export interface SftStageOptions {
  readonly config: TrainConfig;
  readonly sft: SftConfig;
  /** The model SFT starts from (with tokenizer.json). */
  readonly initialModel: string;
  /** Episode settings of the demonstrations (as in training). */
  readonly settings: EpisodeSettingsOverrides;
  /** Demonstrations without messaging (the solo variant). */
  readonly solo: boolean;
  readonly seed: string;
  readonly dataDir?: string;
  /** Writes the result: called with a function that fills a folder. */
  readonly write: (fill: (directory: string) => void) => void;
  readonly onUpdate?: (update: SftUpdate) => void;
}

/** Runs the stage; returns how many demonstration episodes were kept and run. */
export async function runSftStage(options: SftStageOptions): Promise<{ kept: number; episodes: number }> {
  const { config, sft } = options;
  const tokenizerPath = path.join(options.initialModel, 'tokenizer.json');
  const demonstrations = await scriptedDemonstrations({
    task: config.task,
    tokenizerPath,
    teamSizes: sft.demonstrationTeamSizes,
    episodesPerSize: sft.demonstrations,
    communication: !options.solo,
    seed: options.seed,
    settings: options.settings,
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
  });
  if (demonstrations.sequences.length === 0) {
    throw new ConfigError(`none of the ${demonstrations.episodes} scripted demonstrations solved the task within the allowance (workAllowance ${config.workAllowance}); raise it.`);
  }
  const trainerOptions: NativeTrainerOptions = {
    device: config.device,
    lr: sft.learningRate,
    weightDecay: sft.weightDecay,
    maxGradNorm: config.optimizer.gradClipNorm,
    optimizerStateDtype: config.optimizer.stateDtype,
    matmulPrecision: config.precision.train,
    warmupSteps: sft.warmupUpdates,
    ...localRankTrainerOptions(config),
  };
  const trainer = Trainer.open(options.initialModel, trainerOptions);
  const group = await openTrainerGroup(config, trainer, options.initialModel, trainerOptions);
  const turnStartId = Tokenizer.fromFile(tokenizerPath).tokenToId(IM_START);
  try {
    await runSft({
      trainer,
      group,
      histories: demonstrations.sequences,
      config: sft,
      seed: `${options.seed}/sft`,
      ...(turnStartId === undefined ? {} : { turnStartId }),
      ...(options.onUpdate ? { onUpdate: options.onUpdate } : {}),
    });
  } finally {
    await group.close();
  }
  options.write((directory) => {
    trainer.save(directory, config);
    for (const file of ['optimizer.safetensors', 'trainer_state.json']) fs.rmSync(path.join(directory, file), { force: true });
    fs.copyFileSync(tokenizerPath, path.join(directory, 'tokenizer.json'));
  });
  return { kept: demonstrations.successes, episodes: demonstrations.episodes };
}
