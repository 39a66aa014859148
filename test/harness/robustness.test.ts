// Nothing a model writes stops an episode (garbage of every kind, across seeds), and one seed always
// gives the same trace, whether a team runs alone or among other teams interleaved differently.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runEpisode, traceToJsonl, type EpisodeResult } from '../../src/harness/index.js';
import { GarbagePolicy, ScriptedPolicy, type AgentSequence, type GenerateOptions, type GenerateResult, type Policy } from '../../src/policy/index.js';
import { aggregationTask, createRng, explorationTask, generateTree, type AggregationProblem, aggregatorScript, explorerScript } from '../../src/tasks/index.js';
import { qwen3Tokenizer } from './helpers.js';

const tokenizer = qwen3Tokenizer();
const problem: AggregationProblem = { id: 'agg/robust', numbers: [42, 7, 42, 99, 13, 5] };
const tree = generateTree({ depth: 2, rng: createRng('robust-tree') });

describe('garbage never stops an episode', () => {
  it('finishes every episode of a garbage-writing team within its allowance and context (fast-check)', async () => {
    const garbage = new GarbagePolicy({ tokenizer });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 1_000_000 }), fc.boolean(), fc.boolean(), fc.integer({ min: 1, max: 4 }), async (seed, exploration, communication, n) => {
        const result = await runEpisode({
          task: exploration ? explorationTask : aggregationTask,
          problem: exploration ? { id: 'tree/robust', tree } : problem,
          n,
          policy: garbage,
          seed,
          communication,
          workAllowance: 1500,
          finalAllowance: 300,
          contextLimit: 6000,
        });
        expect(['finished', 'exit']).toContain(result.endReason);
        for (const agent of result.agents) {
          expect(agent.workTokens).toBeLessThanOrEqual(1500);
          expect(agent.finalTokens).toBeLessThanOrEqual(300);
          expect(agent.sequence.length).toBeLessThanOrEqual(6000);
        }
        expect(result.trace.at(-1)?.type).toBe('episode_end');
      }),
      { numRuns: 60 },
    );
  });

  it('exercises the error paths: garbage produces tool-call errors, cut calls and unknown ids', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, seed) => runEpisode({ task: aggregationTask, problem, n: 4, policy: new GarbagePolicy({ tokenizer }), seed, workAllowance: 3000 })),
    );
    const events = results.flatMap((result) => result.trace);
    expect(events.some((event) => event.type === 'tool_call' && !event.ok)).toBe(true);
    expect(events.some((event) => event.type === 'cut_call')).toBe(true);
    expect(events.some((event) => event.type === 'piece' && event.text.includes('\ufffd'))).toBe(true);
    expect(events.some((event) => event.type === 'piece' && event.tokens.some((id) => id >= tokenizer.vocabSize))).toBe(true);
  });
});

describe('determinism', () => {
  const aggregation = new ScriptedPolicy({ tokenizer, script: aggregatorScript });
  const explorers = new ScriptedPolicy({ tokenizer, script: explorerScript });
  const run = (seed: string, policy: Policy = explorers): Promise<EpisodeResult> =>
    runEpisode({ task: explorationTask, problem: { id: 'tree/det', tree }, n: 4, policy, seed, workAllowance: 3000 });

  it('gives the same JSONL trace for the same seed', async () => {
    const [first, second] = [await run('s1'), await run('s1')];
    expect(traceToJsonl(second.trace)).toBe(traceToJsonl(first.trace));
    const [a, b] = await Promise.all([
      runEpisode({ task: aggregationTask, problem, n: 6, policy: aggregation, seed: 'agg' }),
      runEpisode({ task: aggregationTask, problem, n: 6, policy: aggregation, seed: 'agg' }),
    ]);
    expect(traceToJsonl(b.trace)).toBe(traceToJsonl(a.trace));
  });

  it('gives different names and traces for different seeds', async () => {
    const [first, second] = await Promise.all([run('s1'), run('s2')]);
    expect(traceToJsonl(second.trace)).not.toBe(traceToJsonl(first.trace));
  });

  it('gives a team the same trace alone and among other teams interleaved differently', async () => {
    const alone = await run('target');
    // Other teams' requests resolve after a varying number of extra ticks, so the global order of
    // requests differs from the run above; the target team's own requests are answered as before.
    let tick = 0;
    const jittered: Policy = {
      tokenizer,
      async generate(sequence: AgentSequence, options: GenerateOptions): Promise<GenerateResult> {
        const result = await explorers.generate(sequence, options);
        if (!targetSequences.has(sequence)) for (let i = (tick += 7) % 5; i > 0; i -= 1) await new Promise((resolve) => setImmediate(resolve));
        return result;
      },
      release: (sequence) => explorers.release(sequence),
    };
    const targetSequences = new Set<AgentSequence>();
    const crowd = Array.from({ length: 8 }, (_, index) => run(`other-${index}`, jittered));
    const target = runEpisode({
      task: explorationTask,
      problem: { id: 'tree/det', tree },
      n: 4,
      policy: { tokenizer, generate: (sequence, options) => (targetSequences.add(sequence), explorers.generate(sequence, options)), release: (sequence) => explorers.release(sequence) },
      seed: 'target',
      workAllowance: 3000,
    });
    const [together] = await Promise.all([target, ...crowd]);
    expect(traceToJsonl(together.trace)).toBe(traceToJsonl(alone.trace));
  });
});
