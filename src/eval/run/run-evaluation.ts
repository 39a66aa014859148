// The evaluation protocol of Appendix M: one policy on the first k held-out problems of a task, at every
// team size, for every evaluation seed, one attempt per (seed, problem, N), fresh names every episode
// (the harness draws them from the episode's seed path). Episodes run concurrently on the shared policy
// with bounded concurrency; each finished episode leaves its trace under traces/ and a line in
// episodes.jsonl. An evaluation directory can be resumed or extended: episodes already recorded are
// not run again. At the end summary.json is written from the records of the requested episodes.
//
// Layout of the evaluation directory (docs/summary-format.md):
//   eval.json       the settings every episode shares (eval-manifest.ts)
//   episodes.jsonl  one record per finished episode (episode-log.ts)
//   traces/         one gzip-compressed JSONL trace per episode (trace-files.ts)
//   summary.json    the summary (schema v1), written last

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ConfigError } from '../../errors.js';
import { agentAllowance, resolveEpisodeSettings, runEpisode, splitEpisodes, type EpisodeSettingsOverrides } from '../../harness/index.js';
import type { Split, Task, TaskProblem } from '../../tasks/index.js';
import { packageVersion } from '../../version.js';
import { measureEpisode } from '../metrics/episode-metrics.js';
import { summarizeSize } from '../metrics/size-summary.js';
import { createProgress } from '../progress.js';
import { SUMMARY_FILE_NAME, writeSummary } from '../summary-file.js';
import { SUMMARY_SCHEMA_VERSION, taskMetricInfo, type SizeSummary, type Summary } from '../summary.js';
import { claimEvalDirectory } from './eval-manifest.js';
import { EPISODE_LOG_FILE_NAME, EpisodeLogWriter, readEpisodeLog, type EpisodeRecord } from './episode-log.js';
import { EVAL_PROBLEM_COUNT, EVAL_SEED_COUNT, EVAL_SIZES, episodeSeed, evalSeeds, MAX_EVAL_SIZE, type EpisodeKey } from './eval-protocol.js';
import type { OpenedPolicy } from '../../policy/open-policy.js';
import { traceFilePath, writeTraceFile } from './trace-files.js';
import { runPool } from './worker-pool.js';

/** Episodes in flight at once by default (they share one policy). */
export const DEFAULT_EVAL_CONCURRENCY = 64;

/** Options of runEvaluation; unset protocol settings take Appendix M's values. */
export interface RunEvaluationOptions {
  /** The task. */
  readonly task: Task;
  /** The policy to evaluate and how the summary names it. */
  readonly policy: OpenedPolicy;
  /** The evaluation directory (created if missing; resumed if it holds the same evaluation). */
  readonly out: string;
  /** Team sizes; default 1, 2, 4, 6, 8, 12, 16. */
  readonly sizes?: readonly number[];
  /** Number of evaluation seeds (seeds 1..k); default 6. */
  readonly seeds?: number;
  /** The first k problems of the split; default 32. */
  readonly problems?: number;
  /** The split; default "eval" (held out). */
  readonly split?: Split;
  /** Directory of the split files; default the tasks layer's ($S3_DATA_DIR or the user cache). */
  readonly dataDir?: string;
  /** Sampling temperature; default the task's evaluation temperature (0.7 exploration, 1.0 aggregation). */
  readonly temperature?: number;
  /** Per-agent work allowance L; default the task's training allowance. */
  readonly workAllowance?: number;
  /** Messaging on (default) or off (a population that succeeds if any agent succeeds). */
  readonly communication?: boolean;
  /** Episodes in flight at once; default 64. */
  readonly concurrency?: number;
  /** Called after each episode is written, with the episodes done and planned in this run (a caller's own progress view). */
  readonly onEpisode?: (done: number, total: number) => void;
  /** Other episode settings (final allowance, context, piece size, prompt style), as in training; the fields above take precedence. */
  readonly settings?: EpisodeSettingsOverrides;
}

/** What runEvaluation did. */
export interface EvaluationResult {
  /** The summary written. */
  readonly summary: Summary;
  /** Where it was written. */
  readonly summaryPath: string;
  /** Episodes run by this call. */
  readonly episodesRun: number;
  /** Episodes found already finished in the directory. */
  readonly episodesReused: number;
  /** Wall time of this call, ms. */
  readonly wallMs: number;
}

function positiveInteger(flag: string, value: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new ConfigError(`${flag} must be an integer in 1..${max}, got ${String(value)}.`);
  }
  return value;
}

function checkSizes(sizes: readonly number[]): readonly number[] {
  if (sizes.length === 0) throw new ConfigError('--sizes needs at least one team size.');
  for (const n of sizes) positiveInteger('every team size of --sizes', n, MAX_EVAL_SIZE);
  if (new Set(sizes).size !== sizes.length) throw new ConfigError(`--sizes lists a team size twice: ${sizes.join(', ')}.`);
  return [...sizes].sort((x, y) => x - y);
}

const recordKey = (key: EpisodeKey): string => JSON.stringify([key.seed, key.problemId, key.n]);

/** Runs (or resumes) an evaluation and writes its summary.json; see the file header for the directory layout. */
export async function runEvaluation(options: RunEvaluationOptions): Promise<EvaluationResult> {
  const started = performance.now();
  const task = options.task;
  const sizes = checkSizes(options.sizes ?? EVAL_SIZES);
  const seeds = evalSeeds(positiveInteger('--seeds', options.seeds ?? EVAL_SEED_COUNT));
  const problemCount = positiveInteger('--problems', options.problems ?? EVAL_PROBLEM_COUNT);
  const concurrency = positiveInteger('--concurrency', options.concurrency ?? DEFAULT_EVAL_CONCURRENCY);
  const communication = options.communication ?? true;
  const split = options.split ?? 'eval';
  const settings = resolveEpisodeSettings(task, {
    ...options.settings,
    temperature: options.temperature ?? task.defaults.evaluationTemperature,
    ...(options.workAllowance === undefined ? {} : { workAllowance: options.workAllowance }),
  });
  const available = await task.loadProblems({ split, ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }) });
  if (problemCount > available.length) {
    throw new ConfigError(`--problems ${problemCount} exceeds the ${available.length} problems of the ${task.name} ${split} split.`);
  }
  const problems: readonly TaskProblem[] = available.slice(0, problemCount);
  const allowance = { tokensPerAgent: settings.workAllowance, finalAnswerTokens: settings.finalAllowance };
  // A message ablation travels in the episode settings (resolveEpisodeSettings writes only a perturbed channel).
  const messages = settings.messages === undefined ? {} : { messages: settings.messages };
  const thinking = settings.thinking === false ? { thinking: false as const } : {};

  await mkdir(options.out, { recursive: true });
  await claimEvalDirectory(options.out, {
    format: 's3-eval',
    version: 1,
    task: task.name,
    policy: options.policy.info,
    policyKey: options.policy.key,
    comm: communication,
    temperature: settings.temperature,
    allowance,
    contextLimit: settings.contextLimit,
    split,
    ...messages,
    ...thinking,
  });
  const logPath = join(options.out, EPISODE_LOG_FILE_NAME);
  const log = await readEpisodeLog(logPath);
  const finished = new Map(log.records.map((record) => [recordKey(record), record]));
  const planned = sizes.flatMap((n) => seeds.flatMap((seed) => problems.map((problem) => ({ seed, n, problem }))));
  const pending = planned.filter((item) => !finished.has(recordKey({ seed: item.seed, n: item.n, problemId: item.problem.id })));

  const writer = await EpisodeLogWriter.open(logPath, log.completeBytes);
  // Draws on stdout only when it is a terminal.
  const progress = createProgress({ total: pending.length });
  // Finished episodes are written one after another (trace, then its line in episodes.jsonl) while
  // the next episodes run: a job never waits for the disk before the pool starts the next episode,
  // so with a deterministic engine which step each episode joins depends on events alone.
  let persisted: Promise<void> = Promise.resolve();
  let written = 0;
  let persistFailure: { error: unknown } | null = null;
  try {
    await runPool({
      items: pending,
      concurrency,
      job: async ({ seed, n, problem }) => {
        if (persistFailure !== null) throw persistFailure.error;
        const key = { seed, n, problemId: problem.id };
        const result = await runEpisode({
          ...settings,
          task,
          problem,
          n,
          policy: options.policy.policy,
          seed: episodeSeed(key),
          communication,
          temperature: settings.temperature,
          workAllowance: settings.workAllowance,
        });
        const [episode] = splitEpisodes(result.trace);
        const trace = traceFilePath(key);
        const record: EpisodeRecord = { ...key, episodeSeed: episodeSeed(key), trace, ...measureEpisode({ episode, problem }) };
        persisted = persisted.then(async () => {
          if (persistFailure !== null) return;
          try {
            await writeTraceFile(join(options.out, trace), result.trace);
            await writer.append(record);
            finished.set(recordKey(key), record);
            progress.increment(`N=${n} seed ${seed}`);
            written += 1;
            options.onEpisode?.(written, pending.length);
          } catch (error) {
            persistFailure = { error };
          }
        });
      },
    });
    await persisted;
    if (persistFailure !== null) throw (persistFailure as { error: unknown }).error;
  } finally {
    await persisted;
    progress.stop();
    await writer.close();
  }

  const sizeSummaries: Record<string, SizeSummary> = {};
  for (const n of sizes) {
    const episodesBySeed = seeds.map((seed) => problems.map((problem) => finished.get(recordKey({ seed, n, problemId: problem.id })) as EpisodeRecord));
    sizeSummaries[String(n)] = summarizeSize({ task: task.name, n, tokensPerAgent: agentAllowance(settings), communication, episodesBySeed });
  }
  const ownMetrics = taskMetricInfo(task.metrics);
  const summary: Summary = {
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    task: task.name,
    policy: options.policy.info,
    comm: communication,
    seeds,
    problems: { split, count: problems.length, ids: problems.map((problem) => problem.id) },
    allowance,
    temperature: settings.temperature,
    ...messages,
    ...thinking,
    ...(ownMetrics === undefined ? {} : { taskMetrics: ownMetrics }),
    createdAt: new Date().toISOString(),
    packageVersion,
    sizes: sizeSummaries,
  };
  const summaryPath = join(options.out, SUMMARY_FILE_NAME);
  await writeSummary(summaryPath, summary);
  return { summary, summaryPath, episodesRun: pending.length, episodesReused: planned.length - pending.length, wallMs: performance.now() - started };
}
