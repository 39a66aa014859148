// `swarm eval`: the evaluation protocol of Appendix M on a policy (the task's scripted agents, or a
// checkpoint served by the native inference engine). Writes summary.json, episodes.jsonl and per-episode
// traces into --out, resumes an interrupted evaluation there, and prints a table per team size.
import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import {
  DEFAULT_EVAL_CONCURRENCY,
  EVAL_PROBLEM_COUNT,
  EVAL_SEED_COUNT,
  EVAL_SIZES,
  formatSummaryTable,
  runEvaluation,
} from '../eval/run/index.js';
import { demonstratorOf, loadTask, SPLITS, TASK_NAMES, type Split } from '../tasks/index.js';
import { connectPolicy } from '../policy/open-policy.js';
import { REMOTE_PROTOCOLS } from '../policy/remote-policy.js';
import { formatMessagePerturbation, MESSAGE_PERTURBATION_HELP, parseMessagePerturbation } from '../harness/message-channel.js';
import { runEpisodeSettings } from './eval-run-settings.js';
import { KV_CACHE_DTYPES } from '../native/engine.js';
import { addDeterminismFlag, addDeviceFlags, addEngineSizeFlags, KV_DTYPE_HELP, parseChoiceFlag, parseDeterminismFlag, parseDeviceFlags, parseEngineSizeFlags, parseIntegerFlag, parseIntegerListFlag, parseServerList } from './options.js';

interface EvalFlags {
  kvCacheMb?: string;
  maxSequences?: string;
  policy?: string;
  model?: string;
  server?: string;
  protocol: string;
  task: string;
  sizes: string;
  seeds: string;
  problems: string;
  temperature?: string;
  allowance?: string;
  comm: boolean;
  concurrency: string;
  tokenizer?: string;
  run?: string;
  split: string;
  out: string;
  device: string;
  messages: string;
  nondeterministic?: boolean;
  weights: string;
  kvDtype: string;
  thinking: boolean;
}

function parseTemperature(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0) throw new ConfigError(`--temperature must be a number ≥ 0, got "${value}"`);
  return parsed;
}

/** Registers `swarm eval`. */
export function registerEval(program: Command): void {
  const command = program
    .command('eval')
    .description('evaluate a policy with the protocol of Appendix M; writes summary.json, episodes.jsonl and traces')
    .option('--policy <kind>', 'scripted: the task\'s scripted agents (aggregators, or the explorers of Appendix L)')
    .option('--model <dir>', 'a Qwen3 checkpoint folder with its tokenizer.json, served by the native inference engine')
    .option('--server <urls>', 'instead of --model: inference servers, comma-separated (swarm serve; vLLM with --protocol vllm; SGLang with --protocol sglang); needs --tokenizer')
    .option('--protocol <name>', `with --server: ${REMOTE_PROTOCOLS.join(' | ')}`, 's3')
    .option('--task <name>', `${TASK_NAMES.join(', ')} or a task module's path (./my-task.js; docs/tasks.md) (default with --run: the run's task)`)
    .option('--sizes <list>', 'team sizes N, comma-separated', EVAL_SIZES.join(','))
    .option('--seeds <k>', 'evaluation seeds 1..k', String(EVAL_SEED_COUNT))
    .option('--problems <k>', 'the first k problems of the split', String(EVAL_PROBLEM_COUNT))
    .option('--split <name>', 'the split the problems come from: eval (held out, the protocol\'s), dev (held out, for checks) or train', 'eval')
    .option('--temperature <x>', "sampling temperature (default: the run's evaluation temperature with --run, else 0.7 exploration, 1.0 aggregation)")
    .option('--allowance <L>', "per-agent work allowance in tokens (default: the task's training allowance)")
    .option('--no-comm', 'remove the messaging tools and text; the population succeeds if any agent succeeds')
    .option('--concurrency <k>', 'episodes in flight at once', String(DEFAULT_EVAL_CONCURRENCY))
    .option('--messages <perturbation>', `a message ablation: ${MESSAGE_PERTURBATION_HELP} (default none; docs/cli.md)`, 'none')
    .option('--kv-dtype <type>', `with --model: ${KV_DTYPE_HELP}`, 'f32')
    .option('--no-thinking', "Qwen3's thinking mode off: every generation prompt ends in an empty <think></think> block (default: on, or the run's mode with --run)")
    .option('--tokenizer <file>', 'tokenizer.json the agents write with (default: the model\'s own, or the built-in s3-mini for scripted agents)')
    .option('--run <dir>', "a swarm train run directory: evaluate with its episode settings (prompt style, allowances, context, piece size, token cost)")
    .requiredOption('--out <dir>', 'the evaluation directory (an interrupted evaluation there is resumed)');
  addDeterminismFlag(addEngineSizeFlags(addDeviceFlags(command))).action(async (flags: EvalFlags) => {
      if ([flags.model, flags.policy, flags.server].filter((flag) => flag !== undefined).length !== 1) {
        throw new ConfigError('swarm eval needs exactly one of --policy scripted, --model DIR and --server URL[,URL...].');
      }
      if (flags.server !== undefined && flags.tokenizer === undefined) throw new ConfigError('--server needs --tokenizer FILE: the tokenizer.json of the served model.');
      if (flags.policy !== undefined && flags.policy !== 'scripted') throw new ConfigError(`--policy must be "scripted", got "${flags.policy}"`);
      const run = flags.run === undefined ? undefined : runEpisodeSettings(flags.run);
      const taskReference = flags.task ?? run?.task;
      if (taskReference === undefined) throw new ConfigError('swarm eval needs --task NAME (or --run DIR, whose task it then takes).');
      const task = await loadTask(taskReference);
      if (run !== undefined && task.name !== (await loadTask(run.task)).name) throw new ConfigError(`--task ${taskReference} differs from the task of --run ${flags.run} (${run.task}).`);
      if (!(SPLITS as readonly string[]).includes(flags.split)) throw new ConfigError(`--split must be one of ${SPLITS.join(', ')}, got "${flags.split}".`);
      const split = flags.split as Split;
      const sizes = parseIntegerListFlag('--sizes', flags.sizes, 1);
      const seeds = parseIntegerFlag('--seeds', flags.seeds, 1);
      const problems = parseIntegerFlag('--problems', flags.problems, 1);
      const concurrency = parseIntegerFlag('--concurrency', flags.concurrency, 1);
      const temperature = flags.temperature === undefined ? run?.temperature : parseTemperature(flags.temperature);
      const workAllowance = flags.allowance === undefined ? undefined : parseIntegerFlag('--allowance', flags.allowance, 1);
      const tokenizer = flags.tokenizer === undefined ? {} : { tokenizerPath: flags.tokenizer };
      const messages = parseMessagePerturbation(flags.messages);
      if (messages.kind !== 'none' && !flags.comm) throw new ConfigError(`--messages ${flags.messages} perturbs the message channel, which --no-comm removes; use one or the other.`);
      const device = parseDeviceFlags(flags);
      const kvCacheDtype = parseChoiceFlag('--kv-dtype', flags.kvDtype, KV_CACHE_DTYPES);
      const thinking = flags.thinking && run?.settings.thinking !== false;
      const policy = await connectPolicy(
        flags.server !== undefined
          ? { kind: 'remote', servers: parseServerList(flags.server), tokenizerPath: flags.tokenizer as string, protocol: parseChoiceFlag('--protocol', flags.protocol, REMOTE_PROTOCOLS) }
          : flags.model !== undefined
            ? { kind: 'model', directory: flags.model, device, kvCacheDtype, engine: parseEngineSizeFlags(flags), ...parseDeterminismFlag(flags), ...tokenizer }
            : { kind: 'scripted', ...demonstratorOf(task), ...tokenizer },
      );
      const result = await runEvaluation({
        task,
        policy,
        out: flags.out,
        sizes,
        seeds,
        problems,
        split,
        communication: flags.comm,
        concurrency,
        settings: { ...run?.settings, thinking, ...(messages.kind === 'none' ? {} : { messages: formatMessagePerturbation(messages) }) },
        ...(temperature === undefined ? {} : { temperature }),
        ...(workAllowance === undefined ? {} : { workAllowance }),
      }).finally(() => policy.close());
      process.stdout.write(formatSummaryTable(result.summary));
      process.stdout.write(
        `wrote ${result.summaryPath}: ${result.episodesRun} episodes run, ${result.episodesReused} already done, ${(result.wallMs / 1000).toFixed(1)} s\n`,
      );
    });
}
