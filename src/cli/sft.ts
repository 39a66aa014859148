// `swarm sft`: supervised fine-tuning on scripted demonstrations (Appendix L), the SFT stage of a
// training config on its own: the preset's task, episode settings and `sft` section (overridable with
// --config/--set), the team variant with messaging or the solo variant (--solo). Writes the result as
// a Hugging Face folder (with tokenizer.json) and its sft-metrics.jsonl into --out.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { addTrainDeviceFlag, withDeviceSet } from './options.js';
import { resolveTrainConfig } from '../config/resolve-train-config.js';
import { ConfigError } from '../errors.js';
import { writeFileAtomic } from '../common/atomic-file.js';
import { modelShape } from '../model/shapes.js';
import { writeRandomCheckpoint } from '../native/random-checkpoint.js';
import { runSftStage } from '../rl/sft-stage.js';
import { trainingEpisodeSettings } from '../rl/train-pipeline.js';
import { readRankEnvironment } from '../distributed/rank-environment.js';
import { serveLaunchedRank } from '../distributed/trainer-worker.js';
import { dismissLaunchedRanks } from '../distributed/trainer-group.js';

interface SftFlags {
  preset?: string;
  config?: string;
  set?: string[];
  model?: string;
  out: string;
  solo?: boolean;
  device?: string;
  trainerGpus?: string;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Registers `swarm sft`. */
export function registerSft(program: Command): void {
  addTrainDeviceFlag(program.command('sft'))
    .description("fine-tune on the task's scripted demonstrations (Appendix L): the sft stage of a training config on its own")
    .option('--preset <name>', 'mini (default), paper-aggregation or paper-exploration: task, episode settings and the sft section')
    .option('--config <file>', 'a JSON config file: optional "preset" plus any settings')
    .option('--set <path=value>', 'override one setting, e.g. sft.updates=100 (repeatable)', collect)
    .option('--model <dir>', 'the Hugging Face Qwen3 folder to start from (default for mini: a fresh built-in s3-mini)')
    .option('--solo', 'the solo variant: single explorers without messaging')
    .requiredOption('--out <dir>', 'the folder to write the fine-tuned model into')
    .option('--trainer-gpus <n>', 'data-parallel trainer ranks, one process (and on CUDA one GPU) each; the same as --set trainerGpus=N (docs/cluster.md)')
    .action(async (flags: SftFlags) => {
      const sets = [...(flags.set ?? []), ...(flags.trainerGpus === undefined ? [] : [`trainerGpus=${flags.trainerGpus}`])];
      const { config } = resolveTrainConfig({ preset: flags.preset, configFile: flags.config, sets: withDeviceSet(sets, flags.device), model: flags.model });
      if (config.sft === null) throw new ConfigError('the config has no sft section (sft is null); give one with --set sft.… or a preset that has it.');
      const out = path.resolve(flags.out);
      if (fs.existsSync(path.join(out, 'model.safetensors'))) throw new ConfigError(`${out} already holds a model; choose another --out.`);
      // Under torchrun or Slurm every rank runs this command (and refuses the same bad flags above): rank 0
      // fine-tunes, the others serve it as trainer ranks until it dismisses them.
      const launcher = readRankEnvironment();
      if (launcher !== null && launcher.rank > 0) {
        await serveLaunchedRank(launcher, { timeoutMs: config.trainerTimeoutSeconds * 1000, cuda: config.device !== 'cpu' });
        return;
      }
      let initialModel = config.model.directory === null ? null : path.resolve(config.model.directory);
      if (initialModel === null) {
        if (config.model.name !== 's3-mini') throw new ConfigError(`${config.model.name} needs --model DIR (a Hugging Face Qwen3 folder).`);
        initialModel = path.join(out, 'initial');
        writeRandomCheckpoint({ shape: modelShape('s3-mini'), seed: BigInt(config.seed), dtype: 'f32', directory: initialModel });
      }
      fs.mkdirSync(out, { recursive: true });
      const metrics: string[] = [];
      const sft = config.sft;
      const result = await runSftStage({
        config,
        sft,
        initialModel,
        settings: trainingEpisodeSettings(config),
        solo: flags.solo === true,
        seed: `sft/${config.seed}`,
        write: (fill) => fill(out),
        onUpdate: (update) => {
          metrics.push(JSON.stringify({ stage: 'sft', ...update }));
          process.stdout.write(`sft ${update.update}/${sft.excerptUpdates + sft.updates} (${update.histories}): loss ${update.loss.toFixed(4)}, grad norm ${update.gradNorm.toFixed(3)}, ${update.tokens} tokens in ${update.seconds.toFixed(1)} s\n`);
        },
      }).finally(() => launcher !== null && dismissLaunchedRanks(launcher, config.trainerTimeoutSeconds * 1000));
      writeFileAtomic(path.join(out, 'sft-metrics.jsonl'), `${metrics.join('\n')}\n`);
      process.stdout.write(`wrote ${out}: ${sft.excerptUpdates + sft.updates} SFT updates on ${result.kept} of ${result.episodes} scripted episodes (the solved ones)\n`);
    });
}
