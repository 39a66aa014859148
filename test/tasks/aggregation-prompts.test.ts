// Tests of the aggregation prompts: Appendix G text verbatim at N = 4, count words following N, the
// token-cost switch and the communication-off variant.
import { describe, expect, it } from 'vitest';
import {
  aggregationFinalPrompt,
  aggregationFirstUserMessage,
  aggregationSystemPrompt,
  aggregationTaskStatement,
  COMMUNICATION_GUIDANCE,
  EXAMPLE_TOOL_CALLS,
  INDEPENDENT_WORK_LINE,
  SHARED_REWARD_STATEMENT,
} from '../../src/tasks/aggregation/prompts.js';

const PAPER_TASK_STATEMENT =
  'You are in a team solving a private-information number sorting task. Each of four agents receives one ' +
  'English-written number. You initially know only your own number. Share your actual assignment, explicitly ' +
  "read partners' messages, and associate each received number with its sender so repeated messages do not " +
  'create duplicates. Collect one number per agent and sort by numeric value, retaining equal values from ' +
  'different agents. Every agent can submit the full list. The team earns reward if at least one final answer ' +
  'is correct; there is no message-count reward. Successful rewards are reduced by at most 0.25, in proportion ' +
  "to the tokens all agents generated divided by the team's total generation allowance. Failures pay no token " +
  'cost, and a correct answer always earns more than a failure.';

const PAPER_FIRST_USER_TURN =
  'Solve this problem with your team: Four agents each have one private number, written in English. Find all ' +
  'four assigned numbers through communication and return their numeric values in ascending order. Include ' +
  'duplicates once per owning agent. You know only your own assignment; other agents do not know it unless you ' +
  'tell them. Final format: #### followed by a JSON array of four integers. Your private number: seventy-three.';

const PAPER_FINAL_PROMPT =
  "Submit the sorted list of all four agents' numbers now. Reply with one line: #### followed by a JSON array " +
  'of four integers in ascending order, retaining duplicates. The messaging phase has ended.';

describe('aggregation prompts at N = 4 (Appendix G)', () => {
  it('states the task verbatim with the token-cost sentences', () => {
    expect(aggregationTaskStatement({ agentCount: 4, communication: true, tokenCostWeight: 0.25 })).toBe(PAPER_TASK_STATEMENT);
  });

  it('gives the first user turn verbatim', () => {
    expect(aggregationFirstUserMessage({ agentCount: 4, communication: true, privateNumber: 73 })).toBe(PAPER_FIRST_USER_TURN);
  });

  it('gives the final prompt verbatim', () => {
    expect(aggregationFinalPrompt({ agentCount: 4, communication: true })).toBe(PAPER_FINAL_PROMPT);
  });

  it('keeps the verbatim sentences of the guidance and shared reward parts', () => {
    expect(COMMUNICATION_GUIDANCE.startsWith('Agents work toward the same team objective; no specialist roles')).toBe(true);
    expect(COMMUNICATION_GUIDANCE).toContain('If evidence conflicts, compare the underlying reasoning.');
    expect(COMMUNICATION_GUIDANCE.endsWith('Examples are hypothetical and contain no evidence about the current problem.')).toBe(true);
    expect(SHARED_REWARD_STATEMENT.startsWith('All participating agents share the same reward if at least one agent active at the end submits a correct answer.')).toBe(true);
    expect(SHARED_REWARD_STATEMENT.endsWith('There is no individual-correctness bonus.')).toBe(true);
    expect(EXAMPLE_TOOL_CALLS).toContain('My private number is forty-two (42). Please share your own assignment.');
    expect(EXAMPLE_TOOL_CALLS).toContain('{"name": "read_messages", "arguments": {}}');
  });

  it('orders the five parts: task, guidance, shared reward, name and teammates, examples', () => {
    const introduction = 'Your name is agent_5. Your teammates are: agent_9, agent_2, agent_40.';
    const prompt = aggregationSystemPrompt({ agentCount: 4, communication: true, tokenCostWeight: 0.25, introduction });
    expect(prompt).toBe([PAPER_TASK_STATEMENT, COMMUNICATION_GUIDANCE, SHARED_REWARD_STATEMENT, introduction, EXAMPLE_TOOL_CALLS].join('\n\n'));
  });
});

describe('count words follow N', () => {
  it.each([
    [8, 'eight', 'Eight'],
    [16, 'sixteen', 'Sixteen'],
    [12, 'twelve', 'Twelve'],
  ])('N = %i uses "%s"', (agentCount, word, capitalized) => {
    const statement = aggregationTaskStatement({ agentCount, communication: true, tokenCostWeight: 0.25 });
    expect(statement).toContain(`Each of ${word} agents receives one English-written number.`);
    const first = aggregationFirstUserMessage({ agentCount, communication: true, privateNumber: 5 });
    expect(first).toContain(`${capitalized} agents each have one private number`);
    expect(first).toContain(`Find all ${word} assigned numbers through communication`);
    expect(first).toContain(`a JSON array of ${word} integers. Your private number: five.`);
    expect(aggregationFinalPrompt({ agentCount, communication: true })).toBe(
      `Submit the sorted list of all ${word} agents' numbers now. Reply with one line: #### followed by a JSON array ` +
        `of ${word} integers in ascending order, retaining duplicates. The messaging phase has ended.`,
    );
    expect(statement).not.toContain('four');
  });

  it('uses singular forms for a lone agent', () => {
    expect(aggregationTaskStatement({ agentCount: 1, communication: false, tokenCostWeight: 0.25 })).toContain(
      'One agent receives one English-written number.',
    );
    expect(aggregationFinalPrompt({ agentCount: 1, communication: false })).toContain('a JSON array of one integer in ascending order');
  });
});

describe('token cost off', () => {
  it('replaces the token-cost sentences by "no message-count or length reward"', () => {
    const statement = aggregationTaskStatement({ agentCount: 4, communication: true, tokenCostWeight: 0 });
    expect(statement.endsWith('The team earns reward if at least one final answer is correct; there is no message-count or length reward.')).toBe(true);
    expect(statement).not.toContain('Successful rewards');
  });

  it('states a different weight when one is configured', () => {
    expect(aggregationTaskStatement({ agentCount: 4, communication: true, tokenCostWeight: 0.5 })).toContain('reduced by at most 0.5,');
  });
});

describe('communication off', () => {
  const introduction = 'Your name is agent_5.';
  const prompt = aggregationSystemPrompt({ agentCount: 4, communication: false, tokenCostWeight: 0.25, introduction });
  const first = aggregationFirstUserMessage({ agentCount: 4, communication: false, privateNumber: 73 });
  const final = aggregationFinalPrompt({ agentCount: 4, communication: false });

  it('removes every messaging instruction, the guidance part and the example calls', () => {
    for (const text of [prompt, first, final]) {
      for (const phrase of ['read_messages', 'message(', "partners' messages", 'through communication', 'unless you tell them', 'messaging phase', 'message-count', 'teammates are']) {
        expect(text).not.toContain(phrase);
      }
    }
    expect(prompt).not.toContain(COMMUNICATION_GUIDANCE);
    expect(prompt).not.toContain('<tool_call>');
  });

  it('keeps the task, the independence line, the shared reward and the name', () => {
    expect(prompt.split('\n\n')).toEqual([
      aggregationTaskStatement({ agentCount: 4, communication: false, tokenCostWeight: 0.25 }),
      INDEPENDENT_WORK_LINE,
      SHARED_REWARD_STATEMENT,
      introduction,
    ]);
    expect(first).toBe(
      'Solve this problem with your team: Four agents each have one private number, written in English. Find all ' +
        'four assigned numbers and return their numeric values in ascending order. Include duplicates once per ' +
        'owning agent. You know only your own assignment. Final format: #### followed by a JSON array of four ' +
        'integers. Your private number: seventy-three.',
    );
    expect(final).toBe(
      "Submit the sorted list of all four agents' numbers now. Reply with one line: #### followed by a JSON array " +
        'of four integers in ascending order, retaining duplicates.',
    );
  });
});
