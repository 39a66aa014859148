// Every way an agent's work and an episode end (Appendix F), and the token accounting behind them:
// final answers, spent allowances, full contexts, everyone idle (aggregation asks once; exploration
// ends), the exit (pending generations aborted), and the piece size rule maxNew = min(1,024, allowance
// left, context left).

import { describe, expect, it } from 'vitest';
import { runEpisode, type EpisodeResult, type PhaseEvent } from '../../src/harness/index.js';
import type { AgentSequence, GenerateOptions, GenerateResult, Policy } from '../../src/policy/index.js';
import { aggregationTask, createRng, explorationTask, exitPath, generateTree, type AggregationProblem } from '../../src/tasks/index.js';
import { call, IDLE, piece, qwen3Tokenizer, TextPolicy } from './helpers.js';

const tokenizer = qwen3Tokenizer();
const problem: AggregationProblem = { id: 'agg/term', numbers: [42, 7, 42, 99] };
const tree = generateTree({ depth: 1, rng: createRng('termination-tree') });
const treeProblem = { id: 'tree/term', tree };
const NEVER_STOPS = ' word'.repeat(3000);

function phases(result: EpisodeResult, agent: string): string[] {
  return result.trace.filter((event): event is PhaseEvent => event.type === 'phase' && event.agent === agent).map((event) => `${event.phase}:${event.reason}`);
}

describe('aggregation', () => {
  it('ends an agent’s work with a #### answer and grades it', async () => {
    const policy = new TextPolicy(tokenizer, (sequence) => `<think>\nI know.\n</think>\n\n#### [7, 42]<|im_end|>`);
    const result = await runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 1 });
    expect(result.teamSuccess).toBe(true);
    expect(result.agents.map((agent) => agent.answer)).toEqual(['[7, 42]', '[7, 42]']);
    expect(policy.requests).toHaveLength(2);
    for (const agent of result.agents) expect(phases(result, agent.name)).toEqual(['done:answered']);
  });

  it('grades a wrong answer as wrong and the team fails', async () => {
    const policy = new TextPolicy(tokenizer, () => '#### [42, 7]<|im_end|>');
    const result = await runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 1 });
    expect(result.teamSuccess).toBe(false);
    expect(result.trace.filter((event) => event.type === 'final_answer').map((event) => event.type === 'final_answer' && event.correct)).toEqual([false, false]);
  });

  it('spends exactly the work allowance, then exactly the final allowance, with a policy that never stops', async () => {
    const policy = new TextPolicy(tokenizer, () => NEVER_STOPS);
    const result = await runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 2, workAllowance: 3000, finalAllowance: 700 });
    for (const agent of result.agents) {
      expect(agent.workTokens).toBe(3000);
      expect(agent.finalTokens).toBe(700);
      expect(agent.sequence.sampledCount).toBe(3700);
      expect(phases(result, agent.name)).toEqual(['final:allowance', 'done:allowance']);
    }
    const sizes = policy.requests.filter((request) => request.agent === result.agents[0].name).map((request) => request.options.maxNew);
    expect(sizes).toEqual([1024, 1024, 952, 700]);
  });

  it('asks each agent for its final answer with the task’s prompt after its allowance is spent', async () => {
    const policy = new TextPolicy(tokenizer, (sequence) =>
      sequence.context.at(-1)?.kind === 'final_prompt' ? '#### [7, 42]<|im_end|>' : NEVER_STOPS,
    );
    const result = await runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 2, workAllowance: 1500 });
    expect(result.teamSuccess).toBe(true);
    const sequence = result.agents[0].sequence;
    const finalPrompt = sequence.context.find((item) => item.kind === 'final_prompt');
    expect(finalPrompt?.kind === 'final_prompt' && finalPrompt.text).toMatch(/^Submit the sorted list of all two agents. numbers now\./);
    const text = finalPrompt?.kind === 'final_prompt' ? finalPrompt.text : '';
    expect(tokenizer.decode([...sequence.tokens()])).toMatch(
      new RegExp(` word<\\|im_end\\|>\n<\\|im_start\\|>user\n${text.replace(/[[\]()|.*+?^$]/g, '\\$&')}<\\|im_end\\|>\n<\\|im_start\\|>assistant\n#### \\[7, 42\\]<\\|im_end\\|>$`),
    );
  });

  it('ends the work phase when the context is full and still asks for the final answer within the limit', async () => {
    const policy = new TextPolicy(tokenizer, (sequence) => (sequence.context.at(-1)?.kind === 'final_prompt' ? '#### [7, 42]<|im_end|>' : NEVER_STOPS));
    const contextLimit = 3000;
    const result = await runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 3, contextLimit, finalAllowance: 200 });
    for (const agent of result.agents) {
      expect(phases(result, agent.name)).toEqual(['final:context', 'done:asked']);
      expect(agent.sequence.length).toBeLessThanOrEqual(contextLimit);
      expect(agent.answer).toBe('[7, 42]');
    }
  });

  it('asks every idle agent once when all are idle, and a non-answer ends it', async () => {
    const policy = new TextPolicy(tokenizer, () => IDLE);
    const result = await runEpisode({ task: aggregationTask, problem, n: 3, policy, seed: 4 });
    expect(policy.requests).toHaveLength(6);
    for (const agent of result.agents) expect(phases(result, agent.name)).toEqual(['final:all_idle', 'done:asked']);
    expect(result.trace.filter((event) => event.type === 'final_answer' && event.answer === null)).toHaveLength(3);
    expect(result.endReason).toBe('finished');
  });

  it('does not execute a tool call written in answer to the final prompt', async () => {
    const policy = new TextPolicy(tokenizer, (sequence) => (sequence.context.at(-1)?.kind === 'final_prompt' ? call('message', { to: 'all', text: 'late' }) : IDLE));
    const result = await runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 5 });
    expect(result.trace.some((event) => event.type === 'tool_call')).toBe(false);
    expect(result.trace.filter((event) => event.type === 'final_answer').every((event) => event.type === 'final_answer' && event.answer === null)).toBe(true);
  });
});

/** Agent 0 walks the exit path; every other agent's request waits until the episode aborts it. */
class RacePolicy implements Policy {
  readonly tokenizer = tokenizer;
  aborted = 0;
  private readonly path = exitPath(tree);

  generate(sequence: AgentSequence, options: GenerateOptions): Promise<GenerateResult> {
    if (sequence.agentIndex !== 0) {
      return new Promise((_, reject) =>
        options.signal?.addEventListener('abort', () => {
          this.aborted += 1;
          reject(new Error('aborted'));
        }),
      );
    }
    const moves = sequence.context.filter((item) => item.kind === 'tool_result' && item.name === 'move').length;
    return Promise.resolve(piece(tokenizer, call('move', { room: this.path[moves + 1] }), options));
  }
}

describe('exploration', () => {
  it('ends the episode as soon as a move reaches the exit and aborts pending generations', async () => {
    const policy = new RacePolicy();
    const result = await runEpisode({ task: explorationTask, problem: treeProblem, n: 3, policy, seed: 6 });
    expect(result.endReason).toBe('exit');
    expect(result.teamSuccess).toBe(true);
    expect(result.agents.map((agent) => agent.succeeded)).toEqual([true, false, false]);
    expect(policy.aborted).toBe(2);
    for (const agent of result.agents) expect(phases(result, agent.name)).toEqual(['done:exit']);
    expect(result.agents[0].sequence.context.at(-1)).toMatchObject({ kind: 'tool_result', name: 'move', ok: true });
  });

  it('ends the episode without a final prompt when every agent is idle', async () => {
    const policy = new TextPolicy(tokenizer, () => IDLE);
    const result = await runEpisode({ task: explorationTask, problem: treeProblem, n: 2, policy, seed: 7 });
    expect(result.endReason).toBe('finished');
    expect(result.teamSuccess).toBe(false);
    for (const agent of result.agents) expect(phases(result, agent.name)).toEqual(['done:all_idle']);
    expect(result.agents.every((agent) => agent.sequence.context.every((item) => item.kind !== 'final_prompt'))).toBe(true);
  });

  it('ends an agent whose allowance is spent and leaves the others working', async () => {
    const policy = new TextPolicy(tokenizer, (sequence) => (sequence.agentIndex === 0 ? NEVER_STOPS : IDLE));
    const result = await runEpisode({ task: explorationTask, problem: treeProblem, n: 2, policy, seed: 8, workAllowance: 2048 });
    expect(result.agents[0].workTokens).toBe(2048);
    expect(result.agents[0].finalTokens).toBe(0);
    expect(phases(result, result.agents[0].name)).toEqual(['done:allowance']);
    expect(phases(result, result.agents[1].name)).toEqual(['done:all_idle']);
  });

  it('never asks for more than min(1024, allowance left, context left) tokens', async () => {
    const policy = new TextPolicy(tokenizer, () => NEVER_STOPS);
    const result = await runEpisode({ task: explorationTask, problem: treeProblem, n: 1, policy, seed: 9, workAllowance: 5000, contextLimit: 4000 });
    const agent = result.agents[0];
    for (const request of policy.requests) {
      expect(request.options.maxNew).toBe(Math.min(1024, 5000 - agent.sequence.pieces.filter((p) => p.start < request.length).reduce((n, p) => n + p.end - p.start, 0), 4000 - request.length));
    }
    expect(agent.sequence.length).toBe(4000);
    expect(phases(result, agent.name)).toEqual(['done:context']);
  });
});
