// NativePolicy drives real episodes: teams of the small random model through runEpisode on the
// aggregation and exploration tasks (noise output; the harness copes), appending only what is new
// to each agent's engine sequence and releasing it at the end; and a soak of many concurrent
// teams that must neither deadlock nor leak (S3_ENGINE_SOAK_SECONDS sets a wave's length).
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runEpisode } from '../../src/harness/index.js';
import { Tokenizer } from '../../src/model/tokenizer/index.js';
import { InferenceEngine } from '../../src/native/engine.js';
import { NativePolicy } from '../../src/policy/native-policy.js';
import { aggregationTask, createRng, explorationTask, generateTree, type AggregationProblem } from '../../src/tasks/index.js';
import { makeCheckpoint } from './helpers.js';

let directory: string;
let engine: InferenceEngine;
let policy: NativePolicy;
const problem: AggregationProblem = { id: 'agg/engine', numbers: [42, 7, 42, 99, 13, 5] };
const tree = generateTree({ depth: 2, rng: createRng('engine-tree') });
const budget = { workAllowance: 400, finalAllowance: 64, contextLimit: 4096 };

beforeAll(() => {
  directory = makeCheckpoint('small', 1);
  engine = InferenceEngine.load(directory, { numBlocks: 4096 });
  policy = new NativePolicy({ engine, tokenizer: Tokenizer.fromFile(path.join(directory, 'tokenizer.json')) });
});

afterAll(() => {
  engine.close();
  fs.rmSync(directory, { recursive: true, force: true });
});

describe('NativePolicy', () => {
  it('runs a team of 4 through the aggregation and the exploration task', async () => {
    const [aggregation, exploration] = await Promise.all([
      runEpisode({ task: aggregationTask, problem, n: 4, policy, seed: 1, ...budget }),
      runEpisode({ task: explorationTask, problem: { id: 'tree/engine', tree }, n: 4, policy, seed: 2, ...budget }),
    ]);
    for (const result of [aggregation, exploration]) {
      expect(['finished', 'exit']).toContain(result.endReason);
      expect(result.trace.at(-1)?.type).toBe('episode_end');
      for (const agent of result.agents) {
        expect(agent.workTokens).toBeGreaterThan(0);
        expect(agent.workTokens).toBeLessThanOrEqual(budget.workAllowance);
        for (const piece of agent.sequence.pieces) expect(piece.policyVersion).toBe(0);
      }
    }
    // Every agent was released: nothing stays open in the engine (the scheduler thread frees
    // released sequences between batches, so wait for it).
    await vi.waitFor(() => expect(engine.stats().openSequences).toBe(0), { timeout: 30_000 });
  });

  it('gives the same episode twice (the engine adds no randomness of its own)', async () => {
    const run = () => runEpisode({ task: aggregationTask, problem, n: 4, policy, seed: 7, ...budget });
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.agents.map((agent) => Array.from(agent.sequence.tokens()))).toEqual(b.agents.map((agent) => Array.from(agent.sequence.tokens())));
  });

  it('soaks: 50 concurrent teams, twice, without deadlock or growing memory', async () => {
    // Each wave runs 50 teams (200 agents with ~1,100-token prompts) on an engine whose cache
    // holds about 14 of them, so agents are preempted and recomputed, until they finish or the
    // wave's time is up and the rest are aborted. Every episode must settle and the engine must
    // end empty.
    const soakEngine = InferenceEngine.load(directory, { numBlocks: 1024 });
    const soakPolicy = new NativePolicy({ engine: soakEngine, tokenizer: policy.tokenizer });
    const teams = 50;
    const waveSeconds = Number(process.env.S3_ENGINE_SOAK_SECONDS ?? 6);
    const rss: number[] = [];
    const log: string[] = [];
    for (let wave = 0; wave < 2; wave += 1) {
      const controller = new AbortController();
      setMaxListeners(teams, controller.signal);
      const timer = setTimeout(() => controller.abort(), waveSeconds * 1000);
      const settled = await Promise.allSettled(
        Array.from({ length: teams }, (_, t) =>
          runEpisode({
            task: t % 2 === 0 ? aggregationTask : explorationTask,
            problem: t % 2 === 0 ? problem : { id: 'tree/soak', tree },
            n: 4,
            policy: soakPolicy,
            seed: wave * teams + t,
            workAllowance: 48,
            finalAllowance: 16,
            contextLimit: 4096,
            signal: controller.signal,
          }),
        ),
      );
      clearTimeout(timer);
      for (const outcome of settled) {
        if (outcome.status === 'rejected') expect((outcome.reason as Error).name).toBe('AbortError');
      }
      await vi.waitFor(() => expect(soakEngine.stats().kvBlocksUsed).toBe(0), { timeout: 30_000 });
      rss.push(process.memoryUsage().rss);
      log.push(`wave ${wave}: ${settled.filter((o) => o.status === 'fulfilled').length}/${teams} finished, rss ${(rss[wave] / 2 ** 20).toFixed(0)} MiB`);
    }
    const stats = soakEngine.stats();
    soakEngine.close();
    expect(stats.openSequences).toBe(0);
    expect(stats.preemptions).toBeGreaterThan(0);
    expect(stats.running + stats.waiting + stats.idle).toBe(0);
    // The first wave sized every buffer; a leak of sequences or requests would grow the second.
    expect(rss[1] - rss[0]).toBeLessThan(64 * 1024 * 1024);
    console.log(`${log.join('; ')}; ${stats.preemptions} preemptions, ${stats.tokensPerSecond.toFixed(0)} generated tokens/s of busy time`);
  }, 120_000);
});
