// The scripted aggregation agent: one broadcast, reads when notified, one number per sender, an answer
// as soon as N − 1 teammates are heard (its thought listing the numbers collected), and what it knows
// when asked.

import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/common/index.js';
import { type ScriptedAgent } from '../../src/policy/index.js';
import { aggregatorScript, numberBroadcastText, readStatedNumber } from '../../src/tasks/index.js';

function agent(teammates: string[], communication = true): ScriptedAgent {
  return aggregatorScript.start({
    prompt: {
      kind: 'prompt',
      agentName: 'agent_1',
      teammates,
      communication,
      toolNames: communication ? ['message', 'read_messages', 'check_notifications'] : [],
      system: '',
      user: 'Solve this problem with your team. Your private number: seventy-three.',
    },
    rng: createRng(1),
  });
}

const sent = { kind: 'tool_result', callId: 0, name: 'message', arguments: {}, ok: true, output: '{}' } as const;
const read = (messages: Array<[string, string]>) =>
  ({ kind: 'tool_result', callId: 1, name: 'read_messages', arguments: {}, ok: true, output: '', messages: messages.map(([from, text], id) => ({ id, from, text })) }) as const;

describe('scripted aggregator', () => {
  it('broadcasts its number in the prompt’s example wording first', () => {
    expect(agent(['agent_2']).decide()).toEqual({
      kind: 'call',
      thought: 'Share my number with everyone.',
      name: 'message',
      arguments: { to: 'all', text: 'My private number is seventy-three (73). Please share your own assignment.' },
    });
  });

  it('idles until notified, then reads', () => {
    const a = agent(['agent_2', 'agent_3']);
    a.observe(sent);
    expect(a.decide().kind).toBe('idle');
    a.observe({ kind: 'notification', unreadBySender: { agent_2: 1 } });
    expect(a.decide()).toMatchObject({ kind: 'call', name: 'read_messages' });
  });

  it('keeps one number per sender, so repeats do not duplicate, and answers after hearing N − 1', () => {
    const a = agent(['agent_2', 'agent_3']);
    a.observe(sent);
    a.observe(read([['agent_2', numberBroadcastText(5)], ['agent_2', numberBroadcastText(5)]]));
    expect(a.decide().kind).toBe('idle');
    a.observe(read([['agent_3', 'Mine is seventy-three.']]));
    a.observe(read([['agent_3', numberBroadcastText(73)]]));
    // The thought lists what it collected, own number first, then in the order heard.
    expect(a.decide()).toEqual({ kind: 'answer', thought: 'I have one number from each of my 2 teammates. Collected: 73, 5, 73.', answer: '[5, 73, 73]' });
  });

  it('answers with what it knows when asked', () => {
    const a = agent(['agent_2', 'agent_3']);
    a.observe(sent);
    a.observe(read([['agent_2', numberBroadcastText(99)]]));
    a.observe({ kind: 'final_prompt', text: 'Submit.' });
    expect(a.decide()).toEqual({ kind: 'answer', thought: 'Asked for the final answer; I know 2 numbers. Collected: 73, 99.', answer: '[73, 99]' });
  });

  it('idles without communication and answers with its own number when asked', () => {
    const a = agent([], false);
    expect(a.decide().kind).toBe('idle');
    a.observe({ kind: 'final_prompt', text: 'Submit.' });
    expect(a.decide()).toMatchObject({ kind: 'answer', answer: '[73]' });
  });

  it('reads numbers from digits in parentheses or from words', () => {
    expect(readStatedNumber('My private number is forty-two (42).')).toBe(42);
    expect(readStatedNumber('my number is twelve')).toBe(12);
    expect(readStatedNumber('no numbers here')).toBeNull();
  });
});
