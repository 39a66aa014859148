// `swarm bench engine --lockstep`: what deterministic collection costs. The same teams (fixed
// problems and seeds, the mini preset's episode settings) run through the harness on one model,
// once with the engine in lockstep with JavaScript and once running free, alternating which goes
// first, for several rounds; each round loads a fresh engine per mode. Reports each mode's median
// wall time and the ratio, the time the lockstep engine waited for JavaScript, and whether each
// mode gave the same episodes in every round (lockstep must; free may not).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { resolveTrainConfig } from '../config/resolve-train-config.js';
import { runPool } from '../eval/run/worker-pool.js';
import { runEpisode } from '../harness/run-episode.js';
import { loadBuiltinTokenizer } from '../model/s3-mini-tokenizer.js';
import { Tokenizer } from '../model/tokenizer/index.js';
import { NativePolicy } from '../policy/native-policy.js';
import { trainingEpisodeSettings } from '../rl/train-pipeline.js';
import { loadTask } from '../tasks/index.js';
import type { DeviceOptions, RunnerDescription } from '../native/device.js';
import { InferenceEngine } from '../native/engine.js';
import { engineBenchModel } from './engine-bench.js';
import { median } from './median.js';

/** Options of benchLockstep. */
export interface LockstepBenchOptions {
  /** A checkpoint folder (with tokenizer.json, else the built-in s3-mini tokenizer), or a random shape. */
  readonly model?: string;
  readonly shape?: string;
  /** Teams per round. */
  readonly teams: number;
  /** Agents per team. */
  readonly n: number;
  /** Teams in flight at once. */
  readonly concurrency: number;
  readonly rounds: number;
  readonly device?: DeviceOptions;
}

/** One mode's figures over the rounds. */
export interface LockstepModeFigures {
  readonly wallSeconds: readonly number[];
  readonly medianWallSeconds: number;
  readonly generatedTokens: number;
  readonly tokensPerSecond: number;
  /** Median over rounds of the seconds the engine had work but waited for JavaScript (0 when free). */
  readonly medianHeldSeconds: number;
  /** Every round gave the same episodes (traces digest) as the first. */
  readonly sameEpisodesEveryRound: boolean;
  readonly episodesDigest: string;
}

/** What benchLockstep measured. */
export interface LockstepBenchReport {
  readonly model: string;
  readonly runner: RunnerDescription;
  readonly machine: { readonly cpus: number; readonly loadAverage: readonly number[] };
  readonly task: string;
  readonly teams: number;
  readonly n: number;
  readonly concurrency: number;
  readonly rounds: number;
  readonly lockstep: LockstepModeFigures;
  readonly free: LockstepModeFigures;
  /** Median wall time of lockstep over free (> 1: lockstep is slower). */
  readonly ratio: number;
  /** Lockstep and free gave the same episodes (they may differ: free depends on timing). */
  readonly modesAgree: boolean;
}

interface RoundResult {
  readonly wallSeconds: number;
  readonly generatedTokens: number;
  readonly heldSeconds: number;
  readonly digest: string;
  readonly runner: RunnerDescription;
}

/** Runs the teams once on a fresh engine; the digest covers every episode's trace, in team order. */
async function runRound(directory: string, tokenizer: Tokenizer, options: LockstepBenchOptions, deterministic: boolean): Promise<RoundResult> {
  const config = resolveTrainConfig({}).config;
  const task = await loadTask(config.task);
  const settings = trainingEpisodeSettings(config);
  const problems = await task.loadProblems({ split: 'train' });
  const engine = InferenceEngine.load(directory, { ...options.device, maxContext: config.contextLength, maxSequences: 64, deterministic });
  try {
    const policy = new NativePolicy({ engine, tokenizer });
    const traces: string[] = new Array<string>(options.teams).fill('');
    const started = performance.now();
    await runPool({
      items: Array.from({ length: options.teams }, (_, i) => i),
      concurrency: options.concurrency,
      job: async (index) => {
        const result = await runEpisode({ ...settings, task, problem: problems[index % problems.length], n: options.n, policy, seed: `bench-lockstep/${index}` });
        traces[index] = JSON.stringify(result.trace);
      },
    });
    const wallSeconds = (performance.now() - started) / 1000;
    const stats = engine.stats();
    const hash = createHash('sha256');
    for (const trace of traces) hash.update(trace).update('\n');
    return { wallSeconds, generatedTokens: stats.generatedTokens, heldSeconds: stats.heldSeconds, digest: hash.digest('hex'), runner: stats.runner };
  } finally {
    engine.close();
  }
}

function figures(rounds: readonly RoundResult[]): LockstepModeFigures {
  const wall = rounds.map((r) => r.wallSeconds);
  return {
    wallSeconds: wall,
    medianWallSeconds: median(wall),
    generatedTokens: rounds[0].generatedTokens,
    tokensPerSecond: rounds[0].generatedTokens / median(wall),
    medianHeldSeconds: median(rounds.map((r) => r.heldSeconds)),
    sameEpisodesEveryRound: rounds.every((r) => r.digest === rounds[0].digest),
    episodesDigest: rounds[0].digest,
  };
}

/** Lockstep against free-running collection, side by side in one process. */
export async function benchLockstep(options: LockstepBenchOptions): Promise<LockstepBenchReport> {
  const { directory, label } = engineBenchModel({ model: options.model, shape: options.shape ?? 's3-mini' });
  const tokenizerFile = path.join(directory, 'tokenizer.json');
  const tokenizer = fs.existsSync(tokenizerFile) ? Tokenizer.fromFile(tokenizerFile) : loadBuiltinTokenizer();
  const loadAverage = os.loadavg();
  const lockstep: RoundResult[] = [];
  const free: RoundResult[] = [];
  for (let round = 0; round < options.rounds; round += 1) {
    // Alternate which mode goes first, so a machine that warms up or slows down favours neither.
    const order = round % 2 === 0 ? [true, false] : [false, true];
    for (const deterministic of order) (deterministic ? lockstep : free).push(await runRound(directory, tokenizer, options, deterministic));
  }
  const config = resolveTrainConfig({}).config;
  const a = figures(lockstep);
  const b = figures(free);
  return {
    model: label,
    runner: lockstep[0].runner,
    machine: { cpus: os.cpus().length, loadAverage },
    task: config.task,
    teams: options.teams,
    n: options.n,
    concurrency: options.concurrency,
    rounds: options.rounds,
    lockstep: a,
    free: b,
    ratio: a.medianWallSeconds / b.medianWallSeconds,
    modesAgree: a.episodesDigest === b.episodesDigest,
  };
}
