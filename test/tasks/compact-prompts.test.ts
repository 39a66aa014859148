// Tests of the compact prompt style (ours, for the CPU preset): for both tasks at N = 1, 2, 4, 8, with
// and without messaging, the prompts keep the first user turn's facts and the name line (aggregation:
// in the first user turn, so all agents of a team share the system turn), drop every
// messaging text without messaging, are shorter than the paper's, and the compact tools keep the
// paper's names, arguments and required arguments; the paper style stays the default.
import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/common/random.js';
import { ConfigError } from '../../src/errors.js';
import type { AggregationProblem } from '../../src/tasks/aggregation/problem.js';
import { createAggregationEpisode } from '../../src/tasks/aggregation/episode.js';
import { numberToWords } from '../../src/tasks/aggregation/number-words.js';
import { createExplorationEpisode } from '../../src/tasks/exploration/episode.js';
import type { ExplorationProblem } from '../../src/tasks/exploration/problem.js';
import { COMPACT_EXPLORATION_TOOLS, EXPLORATION_TOOLS, explorationTools } from '../../src/tasks/exploration/tools.js';
import { generateTree } from '../../src/tasks/exploration/tree.js';
import {
  COMPACT_HARNESS_RULES,
  COMPACT_HARNESS_RULES_NO_COMMUNICATION,
  harnessRules,
  IDLENESS_RULES_NO_COMMUNICATION,
} from '../../src/tasks/prompts/harness-rules.js';
import { COMPACT_MESSAGE_TOOLS, MESSAGE_TOOLS, messageTools } from '../../src/tasks/prompts/message-tools.js';
import type { ToolSpec } from '../../src/common/tool-spec.js';
import type { CreateEpisodeOptions, PromptStyle, TaskEpisode, TaskProblem } from '../../src/tasks/task.js';

const SIZES = [1, 2, 4, 8];
const NAMES = ['agent_8', 'agent_21', 'agent_2', 'agent_33', 'agent_5', 'agent_60', 'agent_17', 'agent_41'];
const aggregationProblem: AggregationProblem = { id: 'aggregation/test/0', numbers: [42, 7, 99, 7, 13, 1, 64, 30] };
const explorationProblem: ExplorationProblem = { id: 'exploration-d2/test/0', tree: generateTree({ depth: 2, rng: createRng('compact-tree') }) };

function options<P extends TaskProblem>(problem: P, n: number, communication: boolean, promptStyle?: PromptStyle): CreateEpisodeOptions<P> {
  return {
    problem,
    agentNames: NAMES.slice(0, n),
    communication,
    rng: createRng('compact-roster'),
    workAllowance: 8192,
    contextLimit: 32768,
    tokenCostWeight: 0.25,
    ...(promptStyle === undefined ? {} : { promptStyle }),
  };
}

/** Every text an agent reads before it acts: system prompt with harness rules, first user turn, tool specs. */
function promptTexts(episode: TaskEpisode, agentIndex: number, communication: boolean, promptStyle: PromptStyle): string[] {
  const tools = communication ? [...messageTools(promptStyle), ...episode.toolSpecs()] : episode.toolSpecs();
  return [
    episode.systemPrompt(agentIndex),
    harnessRules({ communication, promptStyle }),
    episode.firstUserMessage(agentIndex),
    ...tools.map((tool) => JSON.stringify(tool)),
  ];
}

const MESSAGING_WORDS = ['message', 'teammate', 'notified', 'read_messages', 'partner'];

/** The shape a model relies on: names, argument names and types, required arguments. */
function signature(tools: readonly ToolSpec[]): unknown {
  return tools.map((tool) => ({
    name: tool.name,
    arguments: Object.entries(tool.parameters.properties).map(([name, schema]) => [name, schema.type]),
    required: tool.parameters.required ?? [],
  }));
}

describe('compact aggregation prompts', () => {
  for (const n of SIZES) {
    for (const communication of [true, false]) {
      it(`keeps the facts and the name line at N = ${n}, messaging ${communication ? 'on' : 'off'}`, () => {
        const episode = createAggregationEpisode(options(aggregationProblem, n, communication, 'compact'));
        const paper = createAggregationEpisode(options(aggregationProblem, n, communication));
        const words = numberToWords(n);
        for (let agent = 0; agent < n; agent += 1) {
          const system = episode.systemPrompt(agent);
          const user = episode.firstUserMessage(agent);
          // The name line opens the first user turn, so every agent of the team has the same system turn.
          expect(user.startsWith(`Your name is ${NAMES[agent]}.`)).toBe(true);
          expect(system).not.toContain('Your name is');
          expect(system).toBe(episode.systemPrompt(0));
          expect(user).toContain(`Your private number: ${numberToWords(aggregationProblem.numbers[agent])}.`);
          expect(user).toContain(`Final format: #### followed by a JSON array of ${n === 1 ? 'one integer' : `${words} integers`}`);
          expect(user.toLowerCase()).toContain(n === 1 ? 'one agent has' : `${words} agents each have`);
          expect(system).not.toContain('<tool_call>');
          expect(system.length + user.length).toBeLessThan(paper.systemPrompt(agent).length + paper.firstUserMessage(agent).length);
          if (communication && n > 1) expect(user).toContain(`Your teammates are: ${episode.teammates(agent).join(', ')}.`);
          if (!communication) {
            for (const text of promptTexts(episode, agent, false, 'compact')) {
              for (const word of MESSAGING_WORDS) expect(text).not.toContain(word);
            }
          }
        }
        expect(episode.finalPrompt(0)).toBe(paper.finalPrompt(0));
      });
    }
  }

  it('states the task in three sentences: the numbers, the sorting, the reward', () => {
    const episode = createAggregationEpisode(options(aggregationProblem, 4, true, 'compact'));
    expect(episode.systemPrompt(0).split('\n\n')[0]).toBe(
      'Each of four agents has one private number. Collect one number per agent and sort them, keeping equal values ' +
        'from different agents. The team earns reward if any final answer is correct, reduced by the tokens generated.',
    );
    expect(episode.firstUserMessage(0)).toBe(
      `Your name is agent_8. Your teammates are: ${episode.teammates(0).join(', ')}.\n\n` +
        'Four agents each have one private number, written in English. Find all four assigned numbers through messages. ' +
        'Final format: #### followed by a JSON array of four integers in ascending order. Your private number: forty-two.',
    );
    const free = createAggregationEpisode({ ...options(aggregationProblem, 4, true, 'compact'), tokenCostWeight: 0 });
    expect(free.systemPrompt(0).endsWith('The team earns reward if any final answer is correct.')).toBe(true);
  });
});

describe('compact exploration prompts', () => {
  for (const n of SIZES) {
    for (const communication of [true, false]) {
      it(`keeps the start room and the name line at N = ${n}, messaging ${communication ? 'on' : 'off'}`, () => {
        const episode = createExplorationEpisode(options(explorationProblem, n, communication, 'compact'));
        const paper = createExplorationEpisode(options(explorationProblem, n, communication));
        for (let agent = 0; agent < n; agent += 1) {
          const system = episode.systemPrompt(agent);
          expect(system).toContain(`Your name is ${NAMES[agent]}.`);
          expect(system).toContain('Your generation allowance is 8192 tokens.');
          expect(episode.firstUserMessage(agent)).toBe(paper.firstUserMessage(agent));
          expect(system.length).toBeLessThan(paper.systemPrompt(agent).length / 2);
          if (!communication) {
            for (const text of promptTexts(episode, agent, false, 'compact')) {
              for (const word of MESSAGING_WORDS) expect(text).not.toContain(word);
            }
          }
        }
        expect(episode.toolSpecs()).toBe(COMPACT_EXPLORATION_TOOLS);
        expect(paper.toolSpecs()).toBe(EXPLORATION_TOOLS);
      });
    }
  }

  it('answers tool calls exactly as the paper style does', () => {
    const compact = createExplorationEpisode(options(explorationProblem, 2, true, 'compact'));
    const paper = createExplorationEpisode(options(explorationProblem, 2, true));
    const door = explorationProblem.tree.doors.get(explorationProblem.tree.start)?.[1] ?? '';
    const calls = [
      { agentIndex: 0, name: 'move', args: { room: door } },
      { agentIndex: 1, name: 'look', args: {} },
      { agentIndex: 1, name: 'move', args: { room: 'R0' } },
      { agentIndex: 0, name: 'move', args: {} },
      { agentIndex: 0, name: 'move', args: { room: door, speed: 2 } },
      { agentIndex: 0, name: 'fly', args: {} },
    ];
    for (const call of calls) expect(compact.callTool(call)).toEqual(paper.callTool(call));
  });
});

describe('compact tools and harness rules', () => {
  it('keep the paper tools\' names, arguments and required arguments, with one-line descriptions only', () => {
    expect(signature(COMPACT_MESSAGE_TOOLS)).toEqual(signature(MESSAGE_TOOLS));
    expect(signature(COMPACT_EXPLORATION_TOOLS)).toEqual(signature(EXPLORATION_TOOLS));
    for (const tool of [...COMPACT_MESSAGE_TOOLS, ...COMPACT_EXPLORATION_TOOLS]) {
      expect(tool.description.split('. ').length).toBe(1);
      for (const schema of Object.values(tool.parameters.properties)) expect(schema.description).toBeUndefined();
    }
    expect(messageTools()).toBe(MESSAGE_TOOLS);
    expect(messageTools('compact')).toBe(COMPACT_MESSAGE_TOOLS);
    expect(explorationTools()).toBe(EXPLORATION_TOOLS);
  });

  it('reduce the harness rules to notifications, read_messages and idleness', () => {
    expect(harnessRules({ communication: true, promptStyle: 'compact' })).toBe(COMPACT_HARNESS_RULES);
    expect(COMPACT_HARNESS_RULES).toContain('read_messages');
    expect(COMPACT_HARNESS_RULES).toContain('idle');
    expect(harnessRules({ communication: false, promptStyle: 'compact' })).toBe(COMPACT_HARNESS_RULES_NO_COMMUNICATION);
    expect(harnessRules({ communication: false })).toBe(IDLENESS_RULES_NO_COMMUNICATION);
    expect(harnessRules({ communication: true, promptStyle: 'paper' })).toBe(harnessRules({ communication: true }));
  });
});

describe('the prompt style option', () => {
  it('defaults to the paper wording', () => {
    const pairs: Array<[TaskEpisode, TaskEpisode]> = [
      [createAggregationEpisode(options(aggregationProblem, 4, true)), createAggregationEpisode(options(aggregationProblem, 4, true, 'paper'))],
      [createExplorationEpisode(options(explorationProblem, 4, true)), createExplorationEpisode(options(explorationProblem, 4, true, 'paper'))],
    ];
    for (const [byDefault, paper] of pairs) {
      expect(byDefault.systemPrompt(2)).toBe(paper.systemPrompt(2));
      expect(byDefault.firstUserMessage(2)).toBe(paper.firstUserMessage(2));
      expect(byDefault.toolSpecs()).toEqual(paper.toolSpecs());
    }
  });

  it('rejects an unknown style naming the field', () => {
    const bad = { ...options(aggregationProblem, 4, true), promptStyle: 'short' as PromptStyle };
    expect(() => createAggregationEpisode(bad)).toThrow(ConfigError);
    expect(() => createAggregationEpisode(bad)).toThrow(/promptStyle must be one of paper, compact, got "short"/);
  });
});
