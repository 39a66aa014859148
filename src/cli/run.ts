// `swarm run --task T --n N [--policy scripted|garbage | --model DIR] [--seed S]`: one episode, shown
// live in the terminal (one line per event, coloured by agent) with a summary at the end. With
// --model the agents are a Qwen3 checkpoint served by the native inference engine, writing with
// the checkpoint's tokenizer (DIR/tokenizer.json); with --server URL[,URL...] a model on inference
// servers (swarm serve; docs/serve.md).
import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import { runEpisode, writeTrace } from '../harness/index.js';
import type { EpisodeResult } from '../harness/index.js';
import { connectPolicy } from '../policy/open-policy.js';
import { REMOTE_PROTOCOLS } from '../policy/remote-policy.js';
import { demonstratorOf, loadTask, TASK_NAMES } from '../tasks/index.js';
import type { Split } from '../tasks/index.js';
import { EpisodeView } from './episode-view.js';
import { addDeterminismFlag, addDeviceFlags, addEngineSizeFlags, parseChoiceFlag, parseDeterminismFlag, parseDeviceFlags, parseEngineSizeFlags, parseIntegerFlag, parseServerList } from './options.js';

interface RunOptions {
  kvCacheMb?: string;
  maxSequences?: string;
  task: string;
  n: string;
  policy: string;
  model?: string;
  server?: string;
  protocol: string;
  seed: string;
  split: string;
  problem: string;
  comm: boolean;
  thinking: boolean;
  allowance?: string;
  tokenizer?: string;
  trace?: string;
  device: string;
  nondeterministic?: boolean;
  weights: string;
}

/** Registers `swarm run`. */
export function registerRun(program: Command): void {
  const command = program
    .command('run')
    .description('run one episode and show it live')
    .requiredOption('--task <name>', `${TASK_NAMES.join(' | ')} | a task module's path (./my-task.js; docs/tasks.md)`)
    .option('--n <n>', 'team size', '4')
    .option('--policy <kind>', 'scripted (the demonstrators) | garbage (random output, to watch the harness cope)', 'scripted')
    .option('--model <dir>', 'a Qwen3 checkpoint folder with its tokenizer.json: the agents are the model (native inference engine)')
    .option('--server <urls>', 'instead of --model: OpenAI-compatible inference servers, comma-separated (swarm serve; docs/serve.md); needs --tokenizer')
    .option('--protocol <name>', `with --server: ${REMOTE_PROTOCOLS.join(' | ')}`, 's3')
    .option('--seed <s>', 'episode seed (names, teammate order, sampling)', '1')
    .option('--split <split>', 'problem split: train | dev | eval', 'eval')
    .option('--problem <index>', 'problem index in the split', '0')
    .option('--no-comm', 'remove the messaging tools and text')
    .option('--allowance <L>', 'per-agent work allowance in tokens (default: the paper’s)')
    .option('--no-thinking', "Qwen3's thinking mode off: every generation prompt ends in an empty <think></think> block")
    .option('--tokenizer <file>', 'tokenizer.json the agents write with (default: DIR/tokenizer.json with --model, else the built-in s3-mini)')
    .option('--trace <file>', 'also write the trace as JSONL');
  addDeterminismFlag(addEngineSizeFlags(addDeviceFlags(command))).action(async (options: RunOptions) => {
      if (!['train', 'dev', 'eval'].includes(options.split)) throw new ConfigError(`--split must be train, dev or eval; got "${options.split}"`);
      const device = parseDeviceFlags(options);
      const task = await loadTask(options.task);
      const n = parseIntegerFlag('--n', options.n, 1);
      const problems = await task.loadProblems({ split: options.split as Split });
      const index = parseIntegerFlag('--problem', options.problem);
      if (index >= problems.length) throw new ConfigError(`--problem ${index} is past the ${problems.length} problems of the ${options.split} split`);
      const tokenizer = options.tokenizer === undefined ? {} : { tokenizerPath: options.tokenizer };
      if (options.server !== undefined && (options.model !== undefined || options.tokenizer === undefined)) {
        throw new ConfigError('--server takes the place of --model and needs --tokenizer FILE (the served model\'s tokenizer.json)');
      }
      const opened = await connectPolicy(
        options.server !== undefined
          ? { kind: 'remote', servers: parseServerList(options.server), tokenizerPath: options.tokenizer as string, protocol: parseChoiceFlag('--protocol', options.protocol, REMOTE_PROTOCOLS) }
          : options.model
            ? { kind: 'model', directory: options.model, device, engine: parseEngineSizeFlags(options), ...parseDeterminismFlag(options), ...tokenizer }
            : options.policy === 'garbage'
              ? { kind: 'garbage', ...tokenizer }
              : options.policy === 'scripted'
                ? { kind: 'scripted', ...demonstratorOf(task), ...tokenizer }
                : failPolicy(options.policy),
      );
      const policy = opened.policy;
      const view = new EpisodeView(process.stdout.isTTY === true);
      let result: EpisodeResult;
      try {
        result = await runEpisode({
          task,
          problem: problems[index],
          n,
          policy,
          seed: options.seed,
          communication: options.comm,
          thinking: options.thinking,
          ...(options.allowance ? { workAllowance: parseIntegerFlag('--allowance', options.allowance, 1) } : {}),
          onEvent: (event) => {
            const line = view.line(event);
            if (line !== null) process.stdout.write(line + '\n');
          },
        });
      } finally {
        opened.close();
      }
      process.stdout.write(view.summary(result) + '\n');
      if (options.trace) await writeTrace(options.trace, result.trace);
    });
}

function failPolicy(kind: string): never {
  throw new ConfigError(`--policy must be scripted or garbage; got "${kind}"`);
}
