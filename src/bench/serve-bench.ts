// `swarm bench serve`: the cost of the HTTP path. A agents each complete one piece of P tokens after a
// random history of H tokens, once straight on the in-process engine and once through `swarm serve`'s
// server (the same engine, on loopback, each piece a POST /v1/completions with the whole history, as
// RemotePolicy sends it), alternating which goes first over R rounds. Reports requests/s and tokens/s
// of both and the ratio of wall times; the two must give the same tokens.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRng } from '../common/random.js';
import type { DeviceOptions, RunnerDescription } from '../native/device.js';
import { InferenceEngine, kvCacheBytesPerPosition, type KvCacheDtype } from '../native/engine.js';
import { InferenceServer } from '../serve/inference-server.js';
import { engineBenchModel } from './engine-bench.js';
import { median } from './median.js';

/** What to run. */
export interface ServeBenchOptions {
  readonly model?: string;
  readonly shape?: string;
  /** Concurrent agents, one piece each per round. */
  readonly agents: number;
  readonly history: number;
  readonly piece: number;
  readonly rounds: number;
  readonly kvDtype: KvCacheDtype;
  readonly device: DeviceOptions;
}

/** One mode's figures over the rounds. */
export interface ServeModeFigures {
  readonly wallSeconds: readonly number[];
  readonly medianWallSeconds: number;
  readonly requestsPerSecond: number;
  readonly tokensPerSecond: number;
}

/** The result. */
export interface ServeBenchResult {
  readonly model: string;
  readonly runner: RunnerDescription;
  readonly agents: number;
  readonly history: number;
  readonly piece: number;
  readonly rounds: number;
  readonly inProcess: ServeModeFigures;
  readonly http: ServeModeFigures;
  /** Median HTTP wall time over median in-process wall time (1.10 = 10% overhead). */
  readonly ratio: number;
  /** Whether both paths gave the same tokens for every agent in every round. */
  readonly sameTokens: boolean;
  readonly machine: { readonly cpus: number; readonly loadAverage: readonly number[] };
}

function figures(walls: number[], requests: number, tokens: number): ServeModeFigures {
  const wall = median(walls);
  return { wallSeconds: walls, medianWallSeconds: wall, requestsPerSecond: requests / wall, tokensPerSecond: tokens / wall };
}

function bytesPerPosition(directory: string, dtype: KvCacheDtype): number {
  const config = JSON.parse(fs.readFileSync(path.join(directory, 'config.json'), 'utf8')) as Record<string, number>;
  const kvHeads = config.num_key_value_heads ?? config.num_attention_heads;
  const headDim = config.head_dim ?? config.hidden_size / config.num_attention_heads;
  return kvCacheBytesPerPosition({ layers: config.num_hidden_layers, kvHeads, headDim }, dtype);
}

/** Runs the benchmark. */
export async function benchServe(options: ServeBenchOptions): Promise<ServeBenchResult> {
  const { directory, label } = engineBenchModel(options);
  const engine = InferenceEngine.load(directory, {
    ...options.device,
    kvCacheDtype: options.kvDtype,
    deterministic: false,
    maxSequences: Math.min(options.agents, 256),
    maxContext: options.history + options.piece + 16,
    // Room for every agent's whole sequence, so neither mode preempts.
    kvCacheBytes: Math.max(1 << 30, Math.ceil(1.25 * options.agents * (options.history + options.piece + 16) * bytesPerPosition(directory, options.kvDtype))),
    prefixCaching: true,
  });
  const server = new InferenceServer({ engine, modelName: 'bench', maxConcurrentRequests: options.agents + 8 });
  const { port } = await server.listen(0);
  const url = `http://127.0.0.1:${port}/v1/completions`;
  const vocab = engine.stats().vocabSize;
  try {
    const histories = Array.from({ length: options.agents }, (_, agent) => {
      const rng = createRng(`bench-serve/${agent}`);
      return Array.from({ length: options.history }, () => rng.nextInt(vocab));
    });
    const pieceOptions = (agent: number, round: number) => ({ maxNew: options.piece, stopTokenIds: [] as number[], temperature: 1, seed: BigInt((round + 1) * 100003 + agent) });
    const inProcess = async (round: number): Promise<number[][]> =>
      Promise.all(
        histories.map(async (history, agent) => {
          const sequence = engine.openSequence();
          try {
            engine.append(sequence, history);
            return (await engine.generate(sequence, pieceOptions(agent, round))).tokens;
          } finally {
            engine.release(sequence);
          }
        }),
      );
    const overHttp = async (round: number): Promise<number[][]> =>
      Promise.all(
        histories.map(async (history, agent) => {
          const o = pieceOptions(agent, round);
          const response = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ prompt: history, max_tokens: o.maxNew, temperature: o.temperature, seed: Number(o.seed), logprobs: 1, return_token_ids: true }),
          });
          const body = (await response.json()) as { choices?: { token_ids: number[] }[]; error?: { message: string } };
          if (!response.ok || body.choices === undefined) throw new Error(`bench serve: HTTP ${response.status}: ${body.error?.message ?? ''}`);
          return body.choices[0].token_ids;
        }),
      );
    // Warm-up: one round of each, untimed (page faults, JIT, allocator).
    await inProcess(-1);
    await overHttp(-1);
    const walls = { inProcess: [] as number[], http: [] as number[] };
    let sameTokens = true;
    let tokens = 0;
    for (let round = 0; round < options.rounds; round += 1) {
      const order = round % 2 === 0 ? (['inProcess', 'http'] as const) : (['http', 'inProcess'] as const);
      const got: Record<string, number[][]> = {};
      for (const mode of order) {
        const started = performance.now();
        got[mode] = mode === 'inProcess' ? await inProcess(round) : await overHttp(round);
        walls[mode].push((performance.now() - started) / 1000);
      }
      sameTokens &&= JSON.stringify(got.inProcess) === JSON.stringify(got.http);
      tokens = got.inProcess.reduce((total, piece) => total + piece.length, 0);
    }
    const inProcessFigures = figures(walls.inProcess, options.agents, tokens);
    const httpFigures = figures(walls.http, options.agents, tokens);
    return {
      model: label,
      runner: engine.stats().runner,
      agents: options.agents,
      history: options.history,
      piece: options.piece,
      rounds: options.rounds,
      inProcess: inProcessFigures,
      http: httpFigures,
      ratio: httpFigures.medianWallSeconds / inProcessFigures.medianWallSeconds,
      sameTokens,
      machine: { cpus: os.availableParallelism(), loadAverage: os.loadavg() },
    };
  } finally {
    await server.close();
    engine.close();
  }
}
