// `swarm train`: resolves and validates the run's config (preset, --config file, flags, --set);
// with --dry-run prints the plan or the config as JSON; otherwise runs the pipeline (rl/train-
// pipeline.ts) in the run directory with a live view, or continues it with --resume (the saved
// config.json is used), and writes the report.
import fs from 'node:fs';
import type { Command } from 'commander';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { validateTrainConfig } from '../config/validate-train-config.js';
import type { TrainConfig } from '../config/train-config.js';
import { RunDirectory } from '../rl/run-directory.js';
import { runTrainPipeline } from '../rl/train-pipeline.js';
import { writeRunReport } from './run-report.js';
import { TrainView } from './train-view.js';
import { addTrainDeviceFlag, parseChoiceFlag, parseServerList, withDeviceSet } from './options.js';
import { REMOTE_PROTOCOLS } from '../policy/remote-policy.js';
import { WEIGHT_TRANSFERS } from '../policy/server-weight-links.js';
import { resolveTrainConfig } from '../config/resolve-train-config.js';
import { formatTrainPlan } from '../config/train-plan.js';
import { LEARNERS } from '../config/train-config.js';
import { readRankEnvironment } from '../distributed/rank-environment.js';
import { serveLaunchedRank } from '../distributed/trainer-worker.js';
import { dismissLaunchedRanks } from '../distributed/trainer-group.js';

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
  eval?: boolean;
  nondeterministic?: boolean;
  inferenceServers?: string;
  protocol?: string;
  weightTransfer?: string;
  device?: string;
  trainerGpus?: string;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Registers the train command. */
export function registerTrain(program: Command): void {
  addTrainDeviceFlag(program.command('train'))
    .description('train a swarm with cooperative multi-agent RL: optional SFT on scripted demonstrations, evaluation, RL, evaluation, report')
    .option('--preset <name>', 'mini (default), paper-aggregation or paper-exploration')
    .option('--config <file>', 'a JSON config file: optional "preset" plus any settings')
    .option('--set <path=value>', 'override one setting, e.g. optimizer.learningRate=5e-7 (repeatable)', collect)
    .option('--model <dir>', 'a Hugging Face Qwen3 folder')
    .option('--out <dir>', 'the run directory')
    .option('--resume', 'continue a stopped run')
    .option('--learner <learner>', `the learner of Table 1: ${LEARNERS.join(', ')}`)
    .option('--no-eval', 'skip the evaluations before and after training')
    .option('--inference-servers <urls>', 'collect RL rollouts through these inference servers (comma-separated; docs/serve.md, docs/cluster.md)')
    .option('--protocol <name>', `with --inference-servers: ${REMOTE_PROTOCOLS.join(' | ')} (swarm serve, vLLM in dev mode, SGLang)`, 's3')
    .option(
      '--weight-transfer <how>',
      `with --inference-servers: ${WEIGHT_TRANSFERS.join(' | ')}: each update's weights written to RUN/serving for the servers to read, or sent to each swarm serve over a TCP or NCCL weight link (no shared filesystem)`,
      'folder',
    )
    .option('--dry-run', 'print the resolved plan and exit')
    .option('--json', 'with --dry-run: print the resolved config as JSON')
    .option('--trainer-gpus <n>', 'data-parallel trainer ranks, one process (and on CUDA one GPU) each; the same as --set trainerGpus=N (docs/cluster.md). Under torchrun or Slurm the launcher\'s world size is used')
    .option('--nondeterministic', 'the same as --set deterministicCollection=false: the engine runs ahead of the harness (results depend on timing; docs/determinism.md)')
    .action(async (options: TrainCommandOptions) => {
      const resolved = resolveTrainConfig({
        preset: options.preset,
        configFile: options.config,
        sets: withDeviceSet(
          [...(options.nondeterministic === true ? [...(options.set ?? []), 'deterministicCollection=false'] : (options.set ?? [])), ...(options.trainerGpus === undefined ? [] : [`trainerGpus=${options.trainerGpus}`])],
          options.device,
        ),
        model: options.model,
        out: options.out,
        learner: options.learner,
      });
      if (options.dryRun) {
        process.stdout.write(options.json ? `${JSON.stringify(resolved.config, null, 2)}\n` : formatTrainPlan(resolved, { resume: options.resume === true }));
        return;
      }
      if (options.json) throw new ConfigError('--json only applies with --dry-run (it prints the resolved config).');
      let config = resolved.config;
      if (options.resume) {
        const saved = RunDirectory.readConfig(path.resolve(config.out));
        config = validateTrainConfig(saved as TrainConfig, (field) => `${path.join(config.out, 'config.json')}${field === '' ? '' : ` (${field})`}`);
      }
      const directory = config.model.directory;
      if (directory === null && config.model.name !== 's3-mini') {
        throw new ConfigError(`preset "${resolved.presetName}" trains ${config.model.name}: pass its Hugging Face folder with --model DIR.`);
      }
      if (directory !== null && !fs.existsSync(directory)) {
        throw new ConfigError(`--model: the folder ${directory} does not exist; expected a Hugging Face Qwen3 folder.`);
      }
      const weightTransfer = parseChoiceFlag('--weight-transfer', options.weightTransfer ?? 'folder', WEIGHT_TRANSFERS);
      if (options.inferenceServers === undefined && weightTransfer !== 'folder') throw new ConfigError('--weight-transfer applies with --inference-servers only.');
      const inferenceServers =
        options.inferenceServers === undefined
          ? {}
          : { inferenceServers: parseServerList(options.inferenceServers), inferenceProtocol: parseChoiceFlag('--protocol', options.protocol ?? 's3', REMOTE_PROTOCOLS), weightTransfer };
      // Under torchrun or Slurm every rank runs this command (and refuses the same bad flags above): rank 0
      // trains, the others serve it as trainer ranks until it dismisses them, however its run ends.
      const launcher = readRankEnvironment();
      if (launcher !== null && launcher.rank > 0) {
        await serveLaunchedRank(launcher, { timeoutMs: config.trainerTimeoutSeconds * 1000, cuda: config.device !== 'cpu' });
        return;
      }
      const view = new TrainView();
      try {
        const result = await runTrainPipeline({ config, resume: options.resume === true, skipEvaluation: options.eval === false, ...inferenceServers, onEvent: (event) => view.handle(event) }).finally(
          () => launcher !== null && dismissLaunchedRanks(launcher, config.trainerTimeoutSeconds * 1000),
        );
        view.stop();
        const report = await writeRunReport(result.runDirectory);
        process.stdout.write(`run directory ${result.runDirectory}\nfinal checkpoint ${result.finalCheckpoint}\nreport ${report}\n`);
      } finally {
        view.stop();
      }
    });
}
