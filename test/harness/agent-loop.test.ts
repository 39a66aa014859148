// One agent's loop inside a team (SPEC §3, docs/chat-format.md §4): what is appended after a piece,
// when notifications are incorporated, how idle agents wake, and how continuation works. Policies
// here are controlled by the test, so each case fixes exactly when pieces end and messages arrive.

import { describe, expect, it } from 'vitest';
import { runEpisode, type EpisodeResult } from '../../src/harness/index.js';
import type { AgentSequence } from '../../src/policy/index.js';
import { aggregationTask, type AggregationProblem } from '../../src/tasks/index.js';
import { call, ControlledPolicy, IDLE, qwen3Tokenizer, type HeldRequest } from './helpers.js';

const tokenizer = qwen3Tokenizer();
const problem: AggregationProblem = { id: 'agg/test', numbers: [42, 7, 42, 99] };

function decodeFrom(sequence: AgentSequence, start: number): string {
  return tokenizer.decode([...sequence.tokens(start)]);
}

function notice(sender: string, count: number): string {
  const message = count === 1 ? '1 unread message' : `${count} unread messages`;
  return `{"unread_by_sender": {"${sender}": ${count}}, "notice": "You have ${message} from ${sender}.\\nUse read_messages to read them; this notification does not mark messages as read."}`;
}

/** Starts a team of two on the controlled policy and returns both agents' first requests. */
async function startPair(policy: ControlledPolicy, communication = true) {
  const episode = runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 11, communication });
  const first = await policy.next(await firstHeldName(policy));
  const other = await policy.next(otherName(first));
  return { episode, a: first, b: other };
}

async function firstHeldName(policy: ControlledPolicy): Promise<string> {
  while (policy.held.length === 0) await Promise.resolve();
  return policy.held[0].sequence.agentName;
}

function otherName(request: HeldRequest): string {
  const item = request.sequence.context[0];
  if (item.kind !== 'prompt') throw new Error('no prompt');
  return item.teammates[0];
}

/** Answers every held request (put back any taken one first) with an idle response until the episode resolves. */
async function finish(policy: ControlledPolicy, episode: Promise<EpisodeResult>): Promise<EpisodeResult> {
  let done = false;
  const result = episode.finally(() => {
    done = true;
  });
  while (!done) {
    const request = policy.held.shift();
    if (request !== undefined) request.answer(IDLE);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return result;
}

describe('notifications', () => {
  it('incorporates a message that arrived during a piece after the piece, keeping the sampled prefix', async () => {
    const policy = new ControlledPolicy(tokenizer);
    const { episode, a, b } = await startPair(policy);
    b.answer(call('message', { to: a.sequence.agentName, text: 'Mine is seven (7).' }));
    await policy.next(b.sequence.agentName).then((request) => policy.held.push(request));
    const before = a.sequence.length;
    a.answer('<think>\nStill thinking about the');
    const next = await policy.next(a.sequence.agentName);
    const sampled = tokenizer.encode('<think>\nStill thinking about the');
    expect([...next.sequence.tokens(before, before + sampled.length)]).toEqual(sampled);
    expect([...next.sequence.logprobs(before, before + sampled.length)]).toEqual(sampled.map(() => -0.5));
    expect(decodeFrom(next.sequence, before + sampled.length)).toBe(
      `<|im_end|>\n<|im_start|>user\n<tool_response>\n${notice(b.sequence.agentName, 1)}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`,
    );
    const appended = next.sequence.roles(before + sampled.length);
    expect(new Set(appended)).toEqual(new Set([3]));
    expect(next.sequence.context.at(-1)).toEqual({ kind: 'notification', unreadBySender: { [b.sequence.agentName]: 1 } });
    policy.held.push(next);
    const result = await finish(policy, episode);
    expect(result.trace.filter((event) => event.type === 'notification' && event.agent === a.sequence.agentName)).toHaveLength(1);
  });

  it('appends a pending notification after the tool outputs of the same turn', async () => {
    const policy = new ControlledPolicy(tokenizer);
    const { episode, a, b } = await startPair(policy);
    b.answer(call('message', { to: 'all', text: 'hello' }));
    const before = a.sequence.length;
    a.answer(call('check_notifications').replace('check_notifications', 'read_messages'));
    const next = await policy.next(a.sequence.agentName);
    const text = decodeFrom(next.sequence, before);
    // The read ran after the arrival, so the message was read and no notification is due.
    expect(text).toContain('{"messages": [{"from": "' + b.sequence.agentName + '", "text": "hello"}]}');
    expect(text).not.toContain('unread_by_sender');
    policy.held.push(next);
    await finish(policy, episode);
  });

  it('adds the notification as a second block when the call did not read the message', async () => {
    const policy = new ControlledPolicy(tokenizer);
    const { episode, a, b } = await startPair(policy);
    b.answer(call('message', { to: 'all', text: 'first' }));
    const before = a.sequence.length;
    a.answer(call('message', { to: 'all', text: 'mine' }));
    const next = await policy.next(a.sequence.agentName);
    expect(decodeFrom(next.sequence, before)).toMatch(
      new RegExp(
        `</tool_call><\\|im_end\\|>\\n<\\|im_start\\|>user\\n<tool_response>\\n\\{"delivered_to": \\["${b.sequence.agentName}"\\]\\}\\n</tool_response>\\n<tool_response>\\n\\{"unread_by_sender": \\{"${b.sequence.agentName}": 1\\}`,
      ),
    );
    policy.held.push(next);
    await finish(policy, episode);
  });

  it('sends one notification with the current count when two messages arrive during one piece', async () => {
    const policy = new ControlledPolicy(tokenizer);
    const { episode, a, b } = await startPair(policy);
    b.answer(call('message', { to: 'all', text: 'one' }));
    (await policy.next(b.sequence.agentName)).answer(call('message', { to: 'all', text: 'two' }));
    await policy.next(b.sequence.agentName).then((request) => policy.held.push(request));
    const before = a.sequence.length;
    a.answer('<think>\nHmm');
    const next = await policy.next(a.sequence.agentName);
    const text = decodeFrom(next.sequence, before);
    expect(text.match(/unread_by_sender/g)).toHaveLength(1);
    expect(text).toContain(notice(b.sequence.agentName, 2));
    expect(text).not.toContain('one');
    policy.held.push(next);
    await finish(policy, episode);
  });

  it('answers a call cut by a notification with the cut-off error before the notification', async () => {
    const policy = new ControlledPolicy(tokenizer);
    const { episode, a, b } = await startPair(policy);
    b.answer(call('message', { to: 'all', text: 'x' }));
    await policy.next(b.sequence.agentName).then((request) => policy.held.push(request));
    const before = a.sequence.length;
    a.answer('<think>\nRead.\n</think>\n\n<tool_call>\n{"name": "read_mess');
    const next = await policy.next(a.sequence.agentName);
    expect(decodeFrom(next.sequence, before)).toContain(
      '<|im_end|>\n<|im_start|>user\n<tool_response>\n{"error": "tool call stopped before its closing tool_call tag and was not executed; write the complete call again"}\n</tool_response>\n<tool_response>\n{"unread_by_sender"',
    );
    policy.held.push(next);
    const result = await finish(policy, episode);
    expect(result.trace.some((event) => event.type === 'cut_call' && event.agent === a.sequence.agentName)).toBe(true);
  });
});

describe('continuation and idleness', () => {
  it('continues a cut response from its exact prefix when nothing is pending', async () => {
    const policy = new ControlledPolicy(tokenizer);
    const { episode, a, b } = await startPair(policy);
    policy.held.push(b);
    const before = a.sequence.length;
    a.answer('<think>\nA long thought');
    const next = await policy.next(a.sequence.agentName);
    expect(next.sequence.length).toBe(before + tokenizer.encode('<think>\nA long thought').length);
    expect(next.sequence.roleAt(next.sequence.length - 1)).toBe('sampled');
    policy.held.push(next);
    await finish(policy, episode);
  });

  it('wakes an idle agent at once when a message arrives, with the notification as a tool output', async () => {
    const policy = new ControlledPolicy(tokenizer);
    const { episode, a, b } = await startPair(policy);
    const before = a.sequence.length;
    a.answer(IDLE);
    await new Promise((resolve) => setImmediate(resolve));
    expect(policy.held.some((request) => request.sequence === a.sequence)).toBe(false);
    b.answer(call('message', { to: a.sequence.agentName, text: 'wake up' }));
    const woken = await policy.next(a.sequence.agentName);
    expect(decodeFrom(woken.sequence, before)).toBe(
      `${IDLE}\n<|im_start|>user\n<tool_response>\n${notice(b.sequence.agentName, 1)}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`,
    );
    policy.held.push(woken);
    const result = await finish(policy, episode);
    const events = result.trace.filter((event) => event.agent === a.sequence.agentName).map((event) => event.type);
    expect(events.slice(events.indexOf('idle'), events.indexOf('idle') + 3)).toEqual(['idle', 'wake', 'notification']);
  });

  it('answers a response that ended inside a tool call with the cut-off error when the agent wakes', async () => {
    const policy = new ControlledPolicy(tokenizer);
    const { episode, a, b } = await startPair(policy);
    a.answer('<tool_call>\n{"name": "read<|im_end|>');
    await new Promise((resolve) => setImmediate(resolve));
    b.answer(call('message', { to: 'all', text: 'hi' }));
    const woken = await policy.next(a.sequence.agentName);
    const text = decodeFrom(woken.sequence, 0);
    expect(text).toMatch(/read<\|im_end\|>\n<\|im_start\|>user\n<tool_response>\n\{"error": "tool call stopped[^\n]*\n<\/tool_response>\n<tool_response>\n\{"unread_by_sender"/);
    policy.held.push(woken);
    await finish(policy, episode);
  });
});

describe('reading more than a batch', () => {
  it('follows a read that leaves messages unread with a notification of the rest', async () => {
    const policy = new ControlledPolicy(tokenizer);
    const { episode, a, b } = await startPair(policy);
    let sender = b;
    for (let index = 0; index < 18; index += 1) {
      sender.answer(call('message', { to: 'all', text: `m${index}` }));
      sender = await policy.next(b.sequence.agentName);
    }
    policy.held.push(sender);
    const before = a.sequence.length;
    a.answer(call('read_messages'));
    const next = await policy.next(a.sequence.agentName);
    const text = decodeFrom(next.sequence, before);
    expect(text.match(/"from"/g)).toHaveLength(16);
    expect(text).toContain(`\n</tool_response>\n<tool_response>\n${notice(b.sequence.agentName, 2)}\n</tool_response>`);
    policy.held.push(next);
    await finish(policy, episode);
  });
});
