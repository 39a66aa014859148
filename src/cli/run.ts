// `swarm run --task T --n N [--policy scripted|garbage] [--seed S]`: one episode, shown live in the
// terminal (one line per event, coloured by agent) with a summary at the end.
import type { Command } from 'commander';
import { ConfigError, UnavailableError } from '../errors.js';
import { runEpisode, writeTrace } from '../harness/index.js';
import { loadBuiltinTokenizer } from '../model/s3-mini-tokenizer.js';
import { Tokenizer } from '../model/tokenizer/index.js';
import { aggregatorScript, explorerScript, GarbagePolicy, ScriptedPolicy } from '../policy/index.js';
import type { Policy } from '../policy/index.js';
import { getTask, TASK_NAMES } from '../tasks/index.js';
import type { Split } from '../tasks/index.js';
import { EpisodeView } from './episode-view.js';
import { parseIntegerFlag } from './options.js';

interface RunOptions {
  task: string;
  n: string;
  policy: string;
  model?: string;
  seed: string;
  split: string;
  problem: string;
  comm: boolean;
  allowance?: string;
  tokenizer?: string;
  trace?: string;
}

/** Registers `swarm run`. */
export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run one episode and show it live')
    .requiredOption('--task <name>', TASK_NAMES.join(' | '))
    .option('--n <n>', 'team size', '4')
    .option('--policy <kind>', 'scripted (the demonstrators) | garbage (random output, to watch the harness cope)', 'scripted')
    .option('--model <dir>', 'a Qwen3 checkpoint (needs the inference engine)')
    .option('--seed <s>', 'episode seed (names, teammate order, sampling)', '1')
    .option('--split <split>', 'problem split: train | dev | eval', 'eval')
    .option('--problem <index>', 'problem index in the split', '0')
    .option('--no-comm', 'remove the messaging tools and text')
    .option('--allowance <L>', 'per-agent work allowance in tokens (default: the paper’s)')
    .option('--tokenizer <file>', 'tokenizer.json the agents write with (default: the built-in s3-mini)')
    .option('--trace <file>', 'also write the trace as JSONL')
    .action(async (options: RunOptions) => {
      if (options.model) {
        throw new UnavailableError('--model needs the native inference engine, which is not built yet; use --policy scripted or garbage');
      }
      if (!['train', 'dev', 'eval'].includes(options.split)) throw new ConfigError(`--split must be train, dev or eval; got "${options.split}"`);
      const task = getTask(options.task);
      const n = parseIntegerFlag('--n', options.n, 1);
      const problems = await task.loadProblems({ split: options.split as Split });
      const index = parseIntegerFlag('--problem', options.problem);
      if (index >= problems.length) throw new ConfigError(`--problem ${index} is past the ${problems.length} problems of the ${options.split} split`);
      const tokenizer = options.tokenizer ? Tokenizer.fromFile(options.tokenizer) : loadBuiltinTokenizer();
      let policy: Policy;
      if (options.policy === 'garbage') policy = new GarbagePolicy({ tokenizer });
      else if (options.policy === 'scripted') policy = new ScriptedPolicy({ tokenizer, script: options.task === 'aggregation' ? aggregatorScript : explorerScript });
      else throw new ConfigError(`--policy must be scripted or garbage; got "${options.policy}"`);

      const view = new EpisodeView(process.stdout.isTTY === true);
      const result = await runEpisode({
        task,
        problem: problems[index],
        n,
        policy,
        seed: options.seed,
        communication: options.comm,
        ...(options.allowance ? { workAllowance: parseIntegerFlag('--allowance', options.allowance, 1) } : {}),
        onEvent: (event) => {
          const line = view.line(event);
          if (line !== null) process.stdout.write(line + '\n');
        },
      });
      process.stdout.write(view.summary(result) + '\n');
      if (options.trace) await writeTrace(options.trace, result.trace);
    });
}
