// `swarm train`: the s³ RL loop. Not built yet: says so plainly and exits non-zero, never pretends.
import type { Command } from 'commander';
import { UnavailableError } from '../errors.js';

/** Registers the train command. */
export function registerTrain(program: Command): void {
  program
    .command('train')
    .description('train a swarm with cooperative multi-agent RL (not available yet in this version)')
    .option('--preset <name>', 'mini (default), paper-aggregation or paper-exploration')
    .option('--config <file>', 'a config file')
    .option('--model <dir>', 'a Hugging Face Qwen3 folder')
    .option('--out <dir>', 'the run directory')
    .option('--resume', 'continue a stopped run')
    .option('--dry-run', 'print the resolved plan and exit')
    .action(() => {
      throw new UnavailableError(
        'swarm train is not available yet in this version: the RL loop, the native trainer and the s3-mini model ' +
          'are still being built (see the open issues). Nothing was trained.',
      );
    });
}
