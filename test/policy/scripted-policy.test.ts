// ScriptedPolicy: actions rendered as model text and tokenized, pieces cut at maxNew and continued,
// a new decision when context arrives in between, zero log-probs, and seeded determinism.

import { describe, expect, it } from 'vitest';
import { AgentSequence, renderAction, ScriptedPolicy, type GenerateOptions, type Script, type ScriptedAction } from '../../src/policy/index.js';
import { qwen3Tokenizer } from '../harness/helpers.js';

const tokenizer = qwen3Tokenizer();
const STOPS = ['</tool_call>', '<|im_end|>', '<|endoftext|>'].map((marker) => tokenizer.tokenToId(marker) as number);
const options = (maxNew: number, seed = 1): GenerateOptions => ({ maxNew, stopTokenIds: STOPS, temperature: 1, seed });

/** A script that broadcasts until it observes a tool result, then reads; its rng picks the text. */
const script: Script = {
  name: 'test',
  start: ({ rng }) => {
    const word = ['alpha', 'beta', 'gamma', 'delta'][rng.nextInt(4)];
    let results = 0;
    return {
      observe: (item) => {
        if (item.kind === 'tool_result') results += 1;
      },
      decide: (): ScriptedAction =>
        results === 0
          ? { kind: 'call', thought: `Say ${word}.`, name: 'message', arguments: { to: 'all', text: `${word} `.repeat(20) } }
          : { kind: 'call', thought: 'Read.', name: 'read_messages', arguments: {} },
    };
  },
};

function history(): AgentSequence {
  const sequence = new AgentSequence({ agentIndex: 0, agentName: 'agent_1', samplingSeed: 1n });
  sequence.appendContext({
    tokens: [1],
    roles: new Uint8Array(1),
    items: [{ kind: 'prompt', agentName: 'agent_1', teammates: ['agent_2'], communication: true, toolNames: ['message', 'read_messages'], system: '', user: '' }],
  });
  return sequence;
}

describe('ScriptedPolicy', () => {
  it('writes the action as a reasoning line and a tool call, stopping at </tool_call> with log-probs 0', async () => {
    const policy = new ScriptedPolicy({ tokenizer, script });
    const result = await policy.generate(history(), options(1024));
    const text = tokenizer.decode(result.tokens);
    expect(text).toMatch(/^<think>\nSay (alpha|beta|gamma|delta)\.\n<\/think>\n\n<tool_call>\n\{"name": "message", "arguments": \{"to": "all", "text": "/);
    expect(text.endsWith('</tool_call>')).toBe(true);
    expect(result.finish).toBe('stop');
    expect(result.logprobs.every((value) => value === 0)).toBe(true);
    expect(result.tokens).toEqual(tokenizer.encode(text));
  });

  it('cuts an action at maxNew and continues it on the next call', async () => {
    const policy = new ScriptedPolicy({ tokenizer, script });
    const sequence = history();
    const whole = (await new ScriptedPolicy({ tokenizer, script }).generate(history(), options(1024))).tokens;
    const first = await policy.generate(sequence, options(10));
    expect(first).toMatchObject({ finish: 'length' });
    expect(first.tokens).toEqual(whole.slice(0, 10));
    sequence.appendSampled(first);
    const rest = await policy.generate(sequence, options(1024));
    expect([...first.tokens, ...rest.tokens]).toEqual(whole);
    expect(rest.finish).toBe('stop');
  });

  it('drops the rest of a cut action and decides again when context arrived in between', async () => {
    const policy = new ScriptedPolicy({ tokenizer, script });
    const sequence = history();
    sequence.appendSampled(await policy.generate(sequence, options(10)));
    sequence.appendContext({ tokens: [2], roles: Uint8Array.of(2), items: [{ kind: 'tool_result', callId: 0, name: 'message', arguments: {}, ok: true, output: '{}' }] });
    const next = await policy.generate(sequence, options(1024));
    expect(tokenizer.decode(next.tokens)).toBe(renderAction({ kind: 'call', thought: 'Read.', name: 'read_messages', arguments: {} }));
  });

  it('is deterministic given the agent seed and differs across seeds', async () => {
    const texts = async (seed: number) => tokenizer.decode((await new ScriptedPolicy({ tokenizer, script }).generate(history(), options(1024, seed))).tokens);
    expect(await texts(5)).toBe(await texts(5));
    const seen = new Set(await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(texts)));
    expect(seen.size).toBeGreaterThan(1);
  });

  it('returns nothing and finish cancelled once the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await new ScriptedPolicy({ tokenizer, script }).generate(history(), { ...options(100), signal: controller.signal });
    expect(result).toEqual({ tokens: [], logprobs: [], finish: 'cancelled' });
  });

  it('refuses a sequence without the harness’s prompt item', async () => {
    const bare = new AgentSequence({ agentIndex: 0, agentName: 'agent_1', samplingSeed: 1n });
    await expect(new ScriptedPolicy({ tokenizer, script }).generate(bare, options(10))).rejects.toThrow(/no prompt item/);
  });
});

describe('renderAction', () => {
  it('writes answers and idle responses ending with <|im_end|>', () => {
    expect(renderAction({ kind: 'answer', thought: 'Done.', answer: '[1, 2]' })).toBe('<think>\nDone.\n</think>\n\n#### [1, 2]<|im_end|>');
    expect(renderAction({ kind: 'idle', thought: 'Wait.', text: 'Waiting.' })).toBe('<think>\nWait.\n</think>\n\nWaiting.<|im_end|>');
  });
});
