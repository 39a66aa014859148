// `swarm train`: resolves and validates the run's config (preset, --config file, flags, --set) and,
// with --dry-run, prints the plan or the config as JSON. The RL loop itself is not built yet:
// without --dry-run the command says so plainly and exits non-zero, never pretends.
import fs from 'node:fs';
import type { Command } from 'commander';
import { ConfigError, UnavailableError } from '../errors.js';
import { resolveTrainConfig } from '../config/resolve-train-config.js';
import { formatTrainPlan } from '../config/train-plan.js';
import { LEARNERS } from '../config/train-config.js';

/** The options `swarm train` parses. */
interface TrainCommandOptions {
  preset?: string;
  config?: string;
  set?: string[];
  model?: string;
  out?: string;
  resume?: boolean;
  learner?: string;
  dryRun?: boolean;
  json?: boolean;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Registers the train command. */
export function registerTrain(program: Command): void {
  program
    .command('train')
    .description('train a swarm with cooperative multi-agent RL (only --dry-run is available yet in this version)')
    .option('--preset <name>', 'mini (default), paper-aggregation or paper-exploration')
    .option('--config <file>', 'a JSON config file: optional "preset" plus any settings')
    .option('--set <path=value>', 'override one setting, e.g. optimizer.learningRate=5e-7 (repeatable)', collect)
    .option('--model <dir>', 'a Hugging Face Qwen3 folder')
    .option('--out <dir>', 'the run directory')
    .option('--resume', 'continue a stopped run')
    .option('--learner <learner>', `the learner of Table 1: ${LEARNERS.join(', ')}`)
    .option('--dry-run', 'print the resolved plan and exit')
    .option('--json', 'with --dry-run: print the resolved config as JSON')
    .action((options: TrainCommandOptions) => {
      const resolved = resolveTrainConfig({
        preset: options.preset,
        configFile: options.config,
        sets: options.set,
        model: options.model,
        out: options.out,
        learner: options.learner,
      });
      if (options.dryRun) {
        process.stdout.write(options.json ? `${JSON.stringify(resolved.config, null, 2)}\n` : formatTrainPlan(resolved, { resume: options.resume === true }));
        return;
      }
      if (options.json) throw new ConfigError('--json only applies with --dry-run (it prints the resolved config).');
      const directory = resolved.config.model.directory;
      if (directory === null && resolved.config.model.name !== 's3-mini') {
        throw new ConfigError(`preset "${resolved.presetName}" trains ${resolved.config.model.name}: pass its Hugging Face folder with --model DIR.`);
      }
      if (directory !== null && !fs.existsSync(directory)) {
        throw new ConfigError(`--model: the folder ${directory} does not exist; expected a Hugging Face Qwen3 folder.`);
      }
      throw new UnavailableError(
        'swarm train is not available yet in this version: the RL loop, the native trainer and the s3-mini model ' +
          'are still being built (see the open issues). The config is valid (see --dry-run). Nothing was trained.',
      );
    });
}
