// Message ablations (src/harness/message-channel.ts) on teams whose behaviour is known: the scripted
// aggregators solve a problem only by hearing every teammate's number, so dropping messages or
// cutting them to one token fails every team, delaying them costs tokens but not success, and
// shuffling their broadcasts changes nothing; a text policy that messages one teammate shows a
// shuffled message reaching another one, never its sender. Parsing refuses malformed perturbations.
import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/common/random.js';
import { ConfigError } from '../../src/errors.js';
import { runEpisode, type TraceEvent } from '../../src/harness/index.js';
import { formatMessagePerturbation, MessageChannel, parseMessagePerturbation } from '../../src/harness/message-channel.js';
import { ScriptedPolicy } from '../../src/policy/index.js';
import { aggregationTask, aggregatorScript } from '../../src/tasks/index.js';
import { call, IDLE, qwen3Tokenizer, TextPolicy } from './helpers.js';

const tokenizer = qwen3Tokenizer();
const scripted = new ScriptedPolicy({ tokenizer, script: aggregatorScript });

async function episodes(messages: string | undefined, n = 4) {
  const problems = (await aggregationTask.loadProblems({ split: 'eval' })).slice(0, 4);
  return Promise.all(problems.map((problem, index) => runEpisode({ task: aggregationTask, problem, n, policy: scripted, seed: `ablation/${index}`, ...(messages === undefined ? {} : { messages }) })));
}

const ofType = <T extends TraceEvent['type']>(trace: readonly TraceEvent[], type: T) => trace.filter((event): event is Extract<TraceEvent, { type: T }> => event.type === type);

describe('parseMessagePerturbation', () => {
  it('reads none, drop, shuffle, delay:K and truncate:T, and writes them back', () => {
    for (const text of ['none', 'drop', 'shuffle', 'delay:3', 'truncate:0', 'truncate:12']) expect(formatMessagePerturbation(parseMessagePerturbation(text))).toBe(text);
  });

  it('refuses anything else, saying what it expects', () => {
    for (const text of ['', 'dropall', 'delay', 'delay:0', 'delay:-1', 'delay:1.5', 'truncate:x', 'shuffle:2', 'delay:2:3']) {
      expect(() => parseMessagePerturbation(text)).toThrow(ConfigError);
    }
    expect(() => parseMessagePerturbation('delay:0')).toThrow(/--messages: "delay:0" needs an integer ≥ 1 after "delay:"; expected none \| drop/);
  });
});

describe('message ablations on the scripted aggregators', () => {
  it('intact: every team solves its problem', async () => {
    expect((await episodes(undefined)).every((e) => e.teamSuccess)).toBe(true);
  });

  it('drop: no message reaches anyone, no team succeeds, and the trace says whom each was addressed to', async () => {
    const results = await episodes('drop');
    expect(results.some((e) => e.teamSuccess)).toBe(false);
    for (const result of results) {
      expect(result.settings.messages).toBe('drop');
      const sent = ofType(result.trace, 'message');
      expect(sent.length).toBeGreaterThan(0);
      for (const message of sent) {
        expect(message.recipients).toEqual([]);
        expect(message.addressed?.length).toBe(3);
      }
      expect(ofType(result.trace, 'notification')).toHaveLength(0);
    }
  });

  it('truncate:1: recipients read one token of each text, and no team succeeds', async () => {
    const results = await episodes('truncate:1');
    expect(results.some((e) => e.teamSuccess)).toBe(false);
    const message = ofType(results[0].trace, 'message')[0];
    expect(message.deliveredText).toBe(tokenizer.decode(tokenizer.encode(message.text).slice(0, 1)));
    const reads = ofType(results[0].trace, 'tool_call').filter((event) => event.name === 'read_messages');
    expect(reads.some((event) => event.output.includes(JSON.stringify(message.deliveredText)))).toBe(true);
    expect(reads.some((event) => event.output.includes(JSON.stringify(message.text)))).toBe(false);
  });

  it('delay:3: every team still succeeds, later and with more tokens, each message arriving 3 team pieces after it was sent', async () => {
    const intact = await episodes(undefined);
    const delayed = await episodes('delay:3');
    expect(delayed.every((e) => e.teamSuccess)).toBe(true);
    const tokens = (results: typeof intact) => results.reduce((sum, e) => sum + e.totalTokens, 0);
    expect(tokens(delayed)).toBeGreaterThan(tokens(intact));
    // The first notification comes at least 3 pieces after the first message.
    const trace = delayed[0].trace;
    const first = trace.findIndex((event) => event.type === 'message');
    const notified = trace.findIndex((event, i) => i > first && event.type === 'notification');
    expect(ofType(trace.slice(first, notified), 'piece').length).toBeGreaterThanOrEqual(3);
    expect(ofType(trace, 'message').every((m) => m.delayPieces === 3)).toBe(true);
  });

  it('shuffle: broadcasts already reach every teammate, so nothing changes', async () => {
    const intact = await episodes(undefined);
    const shuffled = await episodes('shuffle');
    const strip = (trace: readonly TraceEvent[]) => trace.filter((event) => event.type !== 'episode_start');
    expect(shuffled.map((e) => strip(e.trace))).toEqual(intact.map((e) => strip(e.trace)));
  });
});

describe('shuffle with direct messages', () => {
  it('delivers a direct message to a random teammate other than the sender, the same one for the same seed', async () => {
    const [problem] = await aggregationTask.loadProblems({ split: 'eval' });
    // Each agent's first piece messages its first teammate; then it waits.
    const policy = new TextPolicy(tokenizer, (sequence) => {
      const named = [...tokenizer.decode(Array.from(sequence.tokens(0))).matchAll(/agent_\d+/g)].map((match) => match[0]);
      const teammate = named.find((name) => name !== sequence.agentName) ?? 'all';
      return sequence.pieces.length === 0 ? call('message', { to: teammate, text: 'hello' }) : IDLE;
    });
    const run = () => runEpisode({ task: aggregationTask, problem, n: 6, policy, seed: 'shuffle-direct', messages: 'shuffle', finalAllowance: 8 });
    const first = await run();
    const sent = ofType(first.trace, 'message');
    expect(sent.length).toBe(6);
    let moved = 0;
    for (const message of sent) {
      expect(message.recipients).toHaveLength(1);
      expect(message.recipients[0]).not.toBe(message.agent);
      if (message.addressed !== undefined) {
        moved += 1;
        expect(message.addressed).toEqual([message.to]);
      }
    }
    expect(moved).toBeGreaterThan(0);
    expect(ofType((await run()).trace, 'message').map((m) => m.recipients)).toEqual(sent.map((m) => m.recipients));
  });

  it('routes through the channel as documented', () => {
    const channel = new MessageChannel({ kind: 'shuffle' }, createRng('channel'), (text) => text);
    for (let i = 0; i < 20; i += 1) {
      const route = channel.route('a', ['b', 'c'], ['a', 'b', 'c', 'd'], 'x');
      expect(route.recipients).toHaveLength(2);
      expect(new Set(route.recipients).size).toBe(2);
      expect(route.recipients).not.toContain('a');
    }
  });
});
