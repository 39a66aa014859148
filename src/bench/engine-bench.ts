// The inference-engine benchmarks behind `swarm bench engine`: (1) aggregate decode tokens/s of A
// agents generating one piece each after a random history, against the same work done one sequence
// at a time on the same engine, with the engine's per-step overhead; (2) a soak: concurrent teams
// of a random model run through the harness (runEpisode + NativePolicy) for M minutes, watching
// memory, the KV cache, progress and that every sequence is released at the end.
import { benchCheckpointDirectory } from '../native/random-checkpoint.js';
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRng } from '../common/random.js';
import { ConfigError } from '../errors.js';
import { runEpisode } from '../harness/run-episode.js';
import { loadBuiltinTokenizer } from '../model/s3-mini-tokenizer.js';
import { NativePolicy } from '../policy/native-policy.js';
import { aggregationTask } from '../tasks/aggregation/task.js';
import type { NativeEngineStats } from '../native/binding.js';
import { resolveDevice, type DeviceOptions, type RunnerDescription } from '../native/device.js';
import { InferenceEngine, kvCacheBytesPerPosition, type EngineSequence, type KvCacheDtype } from '../native/engine.js';

const BLOCK_SIZE = 16;
const MAX_PIECE = 1024;

/** The checkpoint folder: --model, or a random bf16 one of the shape (made once, the same cache `swarm bench forward` uses). */
export function engineBenchModel(options: { model?: string; shape?: string }): { directory: string; label: string } {
  if (options.model) return { directory: options.model, label: options.model };
  const name = options.shape ?? 'qwen3-0.6b';
  return { directory: benchCheckpointDirectory(name), label: `${name} (random bf16 weights)` };
}

interface KvShape {
  readonly layers: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly vocabSize: number;
  readonly maxPositions: number;
  readonly dtype: KvCacheDtype;
  /** Keys and values of one position in every layer: 2 · layers · kvHeads · (headDim · (4 f32, 2 bf16, 1 fp8) + 4 for an fp8 row's scale). */
  readonly bytesPerPosition: number;
}

function kvShape(directory: string, dtype: KvCacheDtype): KvShape {
  const config = JSON.parse(fs.readFileSync(path.join(directory, 'config.json'), 'utf8')) as Record<string, number>;
  const layers = config.num_hidden_layers;
  const kvHeads = config.num_key_value_heads ?? config.num_attention_heads;
  const headDim = config.head_dim ?? config.hidden_size / config.num_attention_heads;
  return { layers, kvHeads, headDim, vocabSize: config.vocab_size, maxPositions: config.max_position_embeddings ?? 40960, dtype, bytesPerPosition: kvCacheBytesPerPosition({ layers, kvHeads, headDim }, dtype) };
}

const roundUp = (value: number, multiple: number): number => Math.ceil(value / multiple) * multiple;

/** The stats fields a phase is measured by. */
interface Snapshot {
  readonly wall: number;
  readonly steps: number;
  readonly busySeconds: number;
  readonly generatedTokens: number;
  readonly processedTokens: number;
}

const snapshot = (engine: InferenceEngine): Snapshot => {
  const s = engine.stats();
  return { wall: performance.now() / 1000, steps: s.steps, busySeconds: s.busySeconds, generatedTokens: s.generatedTokens, processedTokens: s.processedTokens };
};

/** One timed phase: wall and engine-busy time, steps, and the overhead of a step outside the forward pass. */
export interface PhaseFigures {
  readonly seconds: number;
  readonly steps: number;
  readonly busySeconds: number;
  /** Wall time the engine spent outside its batches (scheduling, sampling hand-off, JS, waits). */
  readonly overheadSeconds: number;
  readonly busyMsPerStep: number;
  readonly overheadMsPerStep: number;
  readonly generatedTokens: number;
  readonly processedTokens: number;
}

function phase(before: Snapshot, after: Snapshot): PhaseFigures {
  const seconds = after.wall - before.wall;
  const steps = after.steps - before.steps;
  const busySeconds = after.busySeconds - before.busySeconds;
  const overheadSeconds = Math.max(0, seconds - busySeconds);
  return {
    seconds,
    steps,
    busySeconds,
    overheadSeconds,
    busyMsPerStep: steps > 0 ? (1000 * busySeconds) / steps : 0,
    overheadMsPerStep: steps > 0 ? (1000 * overheadSeconds) / steps : 0,
    generatedTokens: after.generatedTokens - before.generatedTokens,
    processedTokens: after.processedTokens - before.processedTokens,
  };
}

function addPhases(a: PhaseFigures | null, b: PhaseFigures): PhaseFigures {
  if (a === null) return b;
  const steps = a.steps + b.steps;
  const busySeconds = a.busySeconds + b.busySeconds;
  const overheadSeconds = a.overheadSeconds + b.overheadSeconds;
  return {
    seconds: a.seconds + b.seconds,
    steps,
    busySeconds,
    overheadSeconds,
    busyMsPerStep: steps > 0 ? (1000 * busySeconds) / steps : 0,
    overheadMsPerStep: steps > 0 ? (1000 * overheadSeconds) / steps : 0,
    generatedTokens: a.generatedTokens + b.generatedTokens,
    processedTokens: a.processedTokens + b.processedTokens,
  };
}

/** Options of `swarm bench engine`. */
export interface EngineBenchOptions {
  readonly model?: string;
  readonly shape?: string;
  readonly agents: number;
  readonly history: number;
  readonly piece: number;
  /** Sequences the one-at-a-time baseline times (its rate is extrapolated to `agents`). */
  readonly baselineAgents: number;
  /** Element type of the KV cache (default 'f32'). */
  readonly kvDtype?: KvCacheDtype;
  readonly seed?: number;
  /** Where the engine runs (default 'auto') and in what weight format. */
  readonly device?: DeviceOptions;
}

/** `swarm bench engine --json`. */
export interface EngineBenchReport {
  readonly model: string;
  /** What the engine's model runner computed with. */
  readonly runner: RunnerDescription;
  readonly machine: { readonly cpus: number; readonly loadAverage: readonly number[] };
  readonly engine: { readonly blockSize: number; readonly kvBlocksTotal: number; readonly kvCacheBytes: number; readonly kvCacheDtype: KvCacheDtype; readonly maxContext: number; readonly maxSequences: number; readonly maxBatchTokens: number };
  readonly agents: number;
  readonly history: number;
  /** Tokens per piece actually asked (the --piece, capped by the context). */
  readonly piece: number;
  /** The concurrent run: A sequences open together. */
  readonly concurrent: {
    readonly prefill: PhaseFigures;
    readonly decode: PhaseFigures;
    readonly decodeTokensPerSecond: number;
  };
  /** The same work one sequence at a time, timed on `sequences` of them. */
  readonly sequential: {
    readonly sequences: number;
    readonly extrapolated: boolean;
    readonly note: string;
    readonly prefill: PhaseFigures;
    readonly decode: PhaseFigures;
    readonly decodeTokensPerSecond: number;
    /** Decode seconds of A sequences one at a time: A × the measured decode seconds per sequence. */
    readonly decodeSecondsForAllAgents: number;
  };
  /** Concurrent decode tokens/s over one-at-a-time decode tokens/s. */
  readonly speedup: number;
  readonly finalStats: { readonly openSequences: number; readonly kvBlocksUsed: number; readonly preemptions: number };
}

/** Random history tokens of one agent. */
function randomHistory(seed: string, length: number, vocab: number): Int32Array {
  const rng = createRng(seed);
  const tokens = new Int32Array(length);
  for (let i = 0; i < length; i += 1) tokens[i] = rng.nextInt(vocab);
  return tokens;
}

/** Prefill (history + the first sampled token) then decode of `piece` tokens on `count` sequences at once. */
async function runWave(engine: InferenceEngine, options: { count: number; first: number; history: number; piece: number; vocab: number; seed: number }): Promise<{ prefill: PhaseFigures; decode: PhaseFigures }> {
  const ids: EngineSequence[] = [];
  try {
    for (let i = 0; i < options.count; i += 1) {
      const id = engine.openSequence();
      ids.push(id);
      engine.append(id, randomHistory(`bench-engine/${options.seed}/${options.first + i}`, options.history, options.vocab));
    }
    const sample = (maxNew: number, salt: number) =>
      Promise.all(ids.map((id, i) => engine.generate(id, { maxNew, stopTokenIds: [], temperature: 1, seed: options.seed * 1_000_003 + (options.first + i) * 7 + salt })));
    const s0 = snapshot(engine);
    await sample(1, 1);
    const s1 = snapshot(engine);
    const pieces = await sample(options.piece, 2);
    const s2 = snapshot(engine);
    for (const piece of pieces) {
      if (piece.tokens.length !== options.piece) throw new Error(`bench engine: a piece ended '${piece.finish}' after ${piece.tokens.length} of ${options.piece} tokens`);
    }
    return { prefill: phase(s0, s1), decode: phase(s1, s2) };
  } finally {
    for (const id of ids) engine.release(id);
  }
}

/** The stats once the engine's scheduler has reaped released sequences (it does so at its next turn; up to 2 s). */
async function settled(engine: InferenceEngine): Promise<NativeEngineStats> {
  for (let i = 0; ; i += 1) {
    const stats = engine.stats();
    if ((stats.openSequences === 0 && stats.kvBlocksUsed === 0) || i >= 200) return stats;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Aggregate decode of `agents` concurrent pieces against one sequence at a time (same engine, same run). */
export async function benchEngine(options: EngineBenchOptions): Promise<EngineBenchReport> {
  const { directory, label } = engineBenchModel(options);
  const kv = kvShape(directory, options.kvDtype ?? 'f32');
  const seed = options.seed ?? 1;
  const { agents, history } = options;
  if (history < 1) throw new ConfigError('--history must be at least 1');
  const maxContext = Math.min(kv.maxPositions, roundUp(history + options.piece + 1, BLOCK_SIZE));
  // The first sampled token follows the history; each piece must fit the context after it.
  const piece = Math.min(options.piece, MAX_PIECE, maxContext - history - 1);
  if (piece < 1) throw new ConfigError(`--history ${history} leaves no room for a piece in the model's ${kv.maxPositions} positions`);
  const blocksPerSequence = roundUp(history + piece + 1, BLOCK_SIZE) / BLOCK_SIZE;
  const kvCacheBytes = agents * blocksPerSequence * BLOCK_SIZE * kv.bytesPerPosition;
  // A CUDA engine keeps its cache on the device, which refuses what does not fit by itself.
  if (resolveDevice(options.device?.device) === 'cpu' && kvCacheBytes > 0.8 * os.freemem()) {
    throw new ConfigError(
      `bench engine: the ${kv.dtype} KV cache of ${agents} × ${history + piece + 1} positions would take ${(kvCacheBytes / 2 ** 30).toFixed(1)} GiB ` +
        `(${kv.bytesPerPosition} bytes per position), over 80% of the ${(os.freemem() / 2 ** 30).toFixed(1)} GiB free; lower --agents or --history`,
    );
  }
  const loadAverage = os.loadavg();
  const engine = InferenceEngine.load(directory, { ...options.device, blockSize: BLOCK_SIZE, kvCacheBytes, kvCacheDtype: kv.dtype, maxContext, maxSequences: Math.max(agents, 1) });
  try {
    const stats0 = engine.stats();
    const wave = { history, piece, vocab: kv.vocabSize, seed };
    const concurrent = await runWave(engine, { ...wave, count: agents, first: 0 });
    let seqPrefill: PhaseFigures | null = null;
    let seqDecode: PhaseFigures | null = null;
    const baseline = Math.min(options.baselineAgents, agents);
    for (let i = 0; i < baseline; i += 1) {
      const one = await runWave(engine, { ...wave, count: 1, first: agents + i });
      seqPrefill = addPhases(seqPrefill, one.prefill);
      seqDecode = addPhases(seqDecode, one.decode);
    }
    if (seqPrefill === null || seqDecode === null) throw new ConfigError('--baseline-agents must be at least 1');
    const concurrentRate = (agents * piece) / concurrent.decode.seconds;
    const sequentialRate = (baseline * piece) / seqDecode.seconds;
    const end = await settled(engine);
    return {
      model: label,
      runner: stats0.runner,
      machine: { cpus: os.cpus().length, loadAverage },
      engine: { blockSize: stats0.blockSize, kvBlocksTotal: stats0.kvBlocksTotal, kvCacheBytes, kvCacheDtype: stats0.kvCacheDtype, maxContext: stats0.maxContext, maxSequences: stats0.maxSequences, maxBatchTokens: stats0.maxBatchTokens },
      agents,
      history,
      piece,
      concurrent: { ...concurrent, decodeTokensPerSecond: concurrentRate },
      sequential: {
        sequences: baseline,
        extrapolated: baseline < agents,
        note:
          baseline < agents
            ? `timed ${baseline} of ${agents} sequences one at a time; the one-at-a-time rate is per sequence and extrapolated to ${agents}`
            : `all ${agents} sequences timed one at a time`,
        prefill: seqPrefill,
        decode: seqDecode,
        decodeTokensPerSecond: sequentialRate,
        decodeSecondsForAllAgents: (agents * seqDecode.seconds) / baseline,
      },
      speedup: concurrentRate / sequentialRate,
      finalStats: { openSequences: end.openSequences, kvBlocksUsed: end.kvBlocksUsed, preemptions: end.preemptions },
    };
  } finally {
    engine.close();
  }
}

/** Options of `swarm bench engine --soak`. */
export interface EngineSoakOptions {
  readonly model?: string;
  readonly shape?: string;
  /** Teams kept in flight. */
  readonly teams: number;
  /** Agents per team. */
  readonly n: number;
  readonly minutes: number;
  readonly workAllowance?: number;
  readonly finalAllowance?: number;
  readonly contextLimit?: number;
  readonly generationPieceTokens?: number;
  /** Sequences in one engine batch (default 64, the engine's). */
  readonly maxSequences?: number;
  /** Element type of the KV cache (default 'f32'). */
  readonly kvDtype?: KvCacheDtype;
  readonly seed?: number;
  /** Where the engine runs (default 'auto') and in what weight format. */
  readonly device?: DeviceOptions;
  /** Seconds of a deadlock window (default 30). */
  readonly windowSeconds?: number;
}

/** Memory and cache at one moment. */
export interface SoakSample {
  readonly atSeconds: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly kvBlocksUsed: number;
  readonly openSequences: number;
  readonly episodesCompleted: number;
  readonly generatedTokens: number;
}

/** `swarm bench engine --soak --json`. */
export interface EngineSoakReport {
  readonly model: string;
  /** What the engine's model runner computed with. */
  readonly runner: RunnerDescription;
  readonly machine: { readonly cpus: number; readonly loadAverage: readonly number[] };
  readonly teams: number;
  readonly n: number;
  readonly minutes: number;
  readonly settings: { readonly workAllowance: number; readonly finalAllowance: number; readonly contextLimit: number; readonly generationPieceTokens: number; readonly promptStyle: 'compact' };
  readonly engine: { readonly kvBlocksTotal: number; readonly kvCacheBytes: number; readonly kvCacheDtype: KvCacheDtype; readonly maxSequences: number; readonly maxContext: number };
  readonly episodesStarted: number;
  readonly episodesCompleted: number;
  readonly episodesFailed: number;
  readonly firstError: string | null;
  readonly generatedTokens: number;
  readonly wallSeconds: number;
  /** Seconds to let the last teams finish after new starts stopped. */
  readonly drainSeconds: number;
  readonly tokensPerSecond: number;
  readonly episodesPerMinute: number;
  readonly engineBusyShare: number;
  readonly preemptions: number;
  readonly warmUp: SoakSample;
  /** At the deadline, before the drain (teams still in flight). */
  readonly atDeadline: SoakSample;
  /** After the drain, every team ended. */
  readonly end: SoakSample;
  readonly peakRssBytes: number;
  readonly rssGrowthBytes: number;
  readonly rssGrowthFraction: number;
  readonly deadlock: { readonly windowSeconds: number; readonly windows: number; readonly windowsWithoutProgress: number; readonly ok: boolean };
  readonly released: boolean;
}

/** Keeps `teams` episodes of a random model in flight for `minutes` and watches memory, cache, progress and release. */
export async function soakEngine(options: EngineSoakOptions): Promise<EngineSoakReport> {
  const { directory, label } = engineBenchModel({ model: options.model, shape: options.shape ?? 'small' });
  const kv = kvShape(directory, options.kvDtype ?? 'f32');
  const tokenizer = loadBuiltinTokenizer();
  if (kv.vocabSize < tokenizer.vocabSize) {
    throw new ConfigError(`bench engine --soak: the model's ${kv.vocabSize} ids cannot hold the s3-mini tokenizer's ${tokenizer.vocabSize}; use --shape small or s3-mini`);
  }
  const settings = {
    workAllowance: options.workAllowance ?? 128,
    finalAllowance: options.finalAllowance ?? 16,
    contextLimit: options.contextLimit ?? 1024,
    generationPieceTokens: options.generationPieceTokens ?? 32,
    promptStyle: 'compact' as const,
  };
  const agents = options.teams * options.n;
  const maxContext = roundUp(settings.contextLimit + 1, BLOCK_SIZE);
  // Room for every agent of the teams in flight at its full context (a new team's agents may open
  // before the ended team's sequences are all released, so the engine may still preempt).
  const kvCacheBytes = agents * maxContext * kv.bytesPerPosition;
  const maxSequences = options.maxSequences ?? 64;
  const windowSeconds = options.windowSeconds ?? 30;
  const loadAverage = os.loadavg();
  const engine = InferenceEngine.load(directory, { ...options.device, blockSize: BLOCK_SIZE, kvCacheBytes, kvCacheDtype: kv.dtype, maxContext, maxSequences });
  const problems = await aggregationTask.loadProblems({ split: 'train' });
  const policy = new NativePolicy({ engine, tokenizer });
  const seed = options.seed ?? 1;
  const t0 = performance.now();
  const elapsed = (): number => (performance.now() - t0) / 1000;
  const deadline = options.minutes * 60;
  const warmUpAt = Math.min(30, deadline / 4);
  let started = 0;
  let completed = 0;
  let failed = 0;
  let firstError: string | null = null;
  let peakRss = process.memoryUsage().rss;
  const sample = (): SoakSample => {
    const memory = process.memoryUsage();
    const stats = engine.stats();
    peakRss = Math.max(peakRss, memory.rss);
    return { atSeconds: elapsed(), rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, kvBlocksUsed: stats.kvBlocksUsed, openSequences: stats.openSequences, episodesCompleted: completed, generatedTokens: stats.generatedTokens };
  };
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // every episode in flight listens to it
  const inFlight = new Set<Promise<void>>();
  const startTeam = (): void => {
    const index = started;
    started += 1;
    const run = runEpisode({
      task: aggregationTask,
      problem: problems[index % problems.length],
      n: options.n,
      policy,
      seed: `bench-engine-soak/${seed}/${index}`,
      signal: abort.signal,
      ...settings,
    }).then(
      () => {
        completed += 1;
      },
      (error: unknown) => {
        failed += 1;
        firstError ??= error instanceof Error ? error.message : String(error);
      },
    );
    const tracked = run.then(() => {
      inFlight.delete(tracked);
      if (elapsed() < deadline && !abort.signal.aborted) startTeam();
    });
    inFlight.add(tracked);
  };

  let warmUp: SoakSample | null = null;
  let atDeadline: SoakSample | null = null;
  // Progress per window: generated tokens or completed episodes must grow in every full window.
  let windowStart = sample();
  let windows = 0;
  let stalled = 0;
  const stats0 = engine.stats();
  const timer = setInterval(() => {
    const now = sample();
    if (warmUp === null && now.atSeconds >= warmUpAt) warmUp = now;
    if (now.atSeconds - windowStart.atSeconds >= windowSeconds) {
      windows += 1;
      if (now.generatedTokens === windowStart.generatedTokens && now.episodesCompleted === windowStart.episodesCompleted) stalled += 1;
      windowStart = now;
    }
  }, 1000);
  let drainSeconds = 0;
  try {
    for (let i = 0; i < options.teams; i += 1) startTeam();
    while (elapsed() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
    atDeadline = sample();
    warmUp ??= atDeadline;
    // Let the teams in flight end on their own (bounded: abort after 10 minutes, or 2× the run).
    const drainLimit = Math.max(60, Math.min(600, 2 * deadline)) * 1000;
    const drainStart = performance.now();
    const drainTimer = setTimeout(() => abort.abort(new Error('the drain took too long')), drainLimit);
    while (inFlight.size > 0) await Promise.all([...inFlight]);
    clearTimeout(drainTimer);
    drainSeconds = (performance.now() - drainStart) / 1000;
  } finally {
    clearInterval(timer);
  }
  // Close a last partial window if it is at least half a window long.
  const last = sample();
  if (last.atSeconds - windowStart.atSeconds >= windowSeconds / 2) {
    windows += 1;
    if (last.generatedTokens === windowStart.generatedTokens && last.episodesCompleted === windowStart.episodesCompleted) stalled += 1;
  }
  (globalThis as { gc?: () => void }).gc?.();
  await settled(engine);
  const end = sample();
  const stats: NativeEngineStats = engine.stats();
  engine.close();
  const wallSeconds = end.atSeconds;
  const generatedTokens = stats.generatedTokens - stats0.generatedTokens;
  const w = warmUp as SoakSample;
  return {
    model: label,
    runner: stats.runner,
    machine: { cpus: os.cpus().length, loadAverage },
    teams: options.teams,
    n: options.n,
    minutes: options.minutes,
    settings,
    engine: { kvBlocksTotal: stats.kvBlocksTotal, kvCacheBytes, kvCacheDtype: stats.kvCacheDtype, maxSequences: stats.maxSequences, maxContext: stats.maxContext },
    episodesStarted: started,
    episodesCompleted: completed,
    episodesFailed: failed,
    firstError,
    generatedTokens,
    wallSeconds,
    drainSeconds,
    tokensPerSecond: generatedTokens / wallSeconds,
    episodesPerMinute: completed / (wallSeconds / 60),
    engineBusyShare: (stats.busySeconds - stats0.busySeconds) / wallSeconds,
    preemptions: stats.preemptions,
    warmUp: w,
    atDeadline: atDeadline ?? end,
    end,
    peakRssBytes: peakRss,
    rssGrowthBytes: end.rssBytes - w.rssBytes,
    rssGrowthFraction: (end.rssBytes - w.rssBytes) / w.rssBytes,
    deadlock: { windowSeconds, windows, windowsWithoutProgress: stalled, ok: stalled === 0 && failed === 0 },
    released: end.openSequences === 0 && end.kvBlocksUsed === 0,
  };
}
