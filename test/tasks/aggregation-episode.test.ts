// Tests of an aggregation episode: private numbers, teammate lists, rejected tool calls, recorded answers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { createAggregationEpisode } from '../../src/tasks/aggregation/episode.js';
import type { AggregationProblem } from '../../src/tasks/aggregation/problem.js';
import { createRng } from '../../src/common/random.js';
import type { CreateEpisodeOptions } from '../../src/tasks/task.js';

const heldOut: AggregationProblem = { id: 'test/0', numbers: [42, 7, 42, 99, 5, 61, 18, 33, 70, 2, 88, 14, 27, 50, 9, 77] };
const names = ['agent_12', 'agent_3', 'agent_40', 'agent_7'];

function options(overrides: Partial<CreateEpisodeOptions<AggregationProblem>> = {}): CreateEpisodeOptions<AggregationProblem> {
  return {
    problem: heldOut,
    agentNames: names,
    communication: true,
    rng: createRng('episode'),
    workAllowance: 8192,
    contextLimit: 40960,
    tokenCostWeight: 0.25,
    ...overrides,
  };
}

describe('createAggregationEpisode', () => {
  it('gives agent i the i-th number of the problem', () => {
    const episode = createAggregationEpisode(options());
    expect(episode.firstUserMessage(0).endsWith('Your private number: forty-two.')).toBe(true);
    expect(episode.firstUserMessage(1).endsWith('Your private number: seven.')).toBe(true);
    expect(episode.firstUserMessage(3).endsWith('Your private number: ninety-nine.')).toBe(true);
  });

  it('shows each agent its teammates, a shuffled list of the others, in its system prompt', () => {
    const episode = createAggregationEpisode(options());
    for (let i = 0; i < names.length; i += 1) {
      const teammates = episode.teammates(i);
      expect([...teammates].sort()).toEqual(names.filter((_, j) => j !== i).sort());
      expect(episode.systemPrompt(i)).toContain(`Your name is ${names[i]}. Your teammates are: ${teammates.join(', ')}.`);
    }
    const again = createAggregationEpisode(options());
    expect(again.teammates(2)).toEqual(episode.teammates(2));
  });

  it('uses only the first N numbers and grades against them', () => {
    const episode = createAggregationEpisode(options());
    expect(episode.gradeAnswer({ agentIndex: 2, text: '#### [7, 42, 42, 99]' })).toBe(true);
    expect(episode.agentSucceeded(2)).toBe(true);
    expect(episode.agentSucceeded(0)).toBe(false);
    expect(episode.teamSucceeded()).toBe(true);
    const eight = createAggregationEpisode(options({ agentNames: ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8'] }));
    expect(eight.gradeAnswer({ agentIndex: 0, text: '#### [7, 42, 42, 99]' })).toBe(false);
    expect(eight.gradeAnswer({ agentIndex: 0, text: '#### [5, 7, 18, 33, 42, 42, 61, 99]' })).toBe(true);
  });

  it('fails the team when no agent answers correctly, and a later answer replaces an earlier one', () => {
    const episode = createAggregationEpisode(options());
    episode.gradeAnswer({ agentIndex: 0, text: '#### [7, 42, 42, 99]' });
    episode.gradeAnswer({ agentIndex: 0, text: '#### [7, 42, 99]' });
    episode.gradeAnswer({ agentIndex: 1, text: 'I do not know.' });
    expect(episode.agentSucceeded(0)).toBe(false);
    expect(episode.teamSucceeded()).toBe(false);
  });

  it('has no task tools and rejects any tool call without throwing', () => {
    const episode = createAggregationEpisode(options());
    expect(episode.toolSpecs()).toEqual([]);
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (name, args) => {
        const result = episode.callTool({ agentIndex: 0, name: name as string, args });
        expect(result.ok).toBe(false);
        expect(typeof (JSON.parse(result.output) as { error: unknown }).error).toBe('string');
      }),
    );
  });

  it('asks for the final answer with the count of the team', () => {
    const episode = createAggregationEpisode(options());
    expect(episode.finalPrompt(1)).toContain("all four agents' numbers");
  });

  it('drops the teammate list without communication', () => {
    const episode = createAggregationEpisode(options({ communication: false }));
    expect(episode.teammates(0)).toEqual([]);
    expect(episode.systemPrompt(0)).toContain('Your name is agent_12.');
    expect(episode.systemPrompt(0)).not.toContain('agent_3');
  });

  it('refuses a team larger than the problem, repeated names and bad settings', () => {
    const train: AggregationProblem = { id: 'train/0', numbers: [1, 2, 3, 4] };
    expect(() => createAggregationEpisode(options({ problem: train, agentNames: ['a', 'b', 'c', 'd', 'e'] }))).toThrow(/has 4 numbers, too few for a team of 5/);
    expect(() => createAggregationEpisode(options({ agentNames: ['a', 'a'] }))).toThrow(ConfigError);
    expect(() => createAggregationEpisode(options({ agentNames: [] }))).toThrow(ConfigError);
    expect(() => createAggregationEpisode(options({ tokenCostWeight: -0.1 }))).toThrow(/tokenCostWeight/);
    expect(() => createAggregationEpisode(options({ workAllowance: 0 }))).toThrow(/workAllowance/);
  });

  it('refuses an agent index outside the team', () => {
    const episode = createAggregationEpisode(options());
    expect(() => episode.systemPrompt(4)).toThrow(ConfigError);
    expect(() => episode.gradeAnswer({ agentIndex: -1, text: '#### [1]' })).toThrow(ConfigError);
  });
});
