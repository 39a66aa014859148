// The agent token history: append-only storage across chunks, roles, log-probs, pieces and copies.

import { describe, expect, it } from 'vitest';
import { AgentSequence, TOKEN_ROLE_CODE, TOKEN_ROLES } from '../../src/policy/index.js';

function sequence(): AgentSequence {
  return new AgentSequence({ agentIndex: 0, agentName: 'agent_5', samplingSeed: 7n });
}

describe('AgentSequence', () => {
  it('keeps context and sampled tokens in order with their roles and log-probs', () => {
    const history = sequence();
    history.appendContext({ tokens: [1, 2, 3], roles: Uint8Array.of(0, 0, 0), items: [] });
    const record = history.appendSampled({ tokens: [4, 5], logprobs: [-0.25, -1.5], finish: 'stop', policyVersion: 9 });
    history.appendContext({ tokens: [6], roles: Uint8Array.of(TOKEN_ROLE_CODE.notification), items: [{ kind: 'notification', unreadBySender: { agent_2: 1 } }] });
    expect([...history.tokens()]).toEqual([1, 2, 3, 4, 5, 6]);
    expect([...history.roles()].map((code) => TOKEN_ROLES[code])).toEqual(['prompt', 'prompt', 'prompt', 'sampled', 'sampled', 'notification']);
    const logprobs = [...history.logprobs()];
    expect(logprobs.slice(0, 3).every(Number.isNaN)).toBe(true);
    expect(logprobs.slice(3, 5)).toEqual([-0.25, -1.5]);
    expect(Number.isNaN(logprobs[5])).toBe(true);
    expect(record).toEqual({ start: 3, end: 5, policyVersion: 9, finish: 'stop' });
    expect(history.sampledCount).toBe(2);
    expect(history.context).toHaveLength(1);
  });

  it('grows across storage chunks without changing what was appended', () => {
    const history = sequence();
    const ids = Array.from({ length: 10_000 }, (_, index) => index);
    history.appendContext({ tokens: ids.slice(0, 4095), roles: new Uint8Array(4095), items: [] });
    history.appendSampled({ tokens: ids.slice(4095), logprobs: ids.slice(4095).map(() => -1), finish: 'length' });
    expect(history.length).toBe(10_000);
    expect([...history.tokens()]).toEqual(ids);
    expect([...history.tokens(4090, 4100)]).toEqual(ids.slice(4090, 4100));
    expect(history.roleAt(4094)).toBe('prompt');
    expect(history.roleAt(4095)).toBe('sampled');
    expect(history.roleAt(9999)).toBe('sampled');
  });

  it('records a null policy version when the policy has none', () => {
    expect(sequence().appendSampled({ tokens: [1], logprobs: [0], finish: 'length' }).policyVersion).toBeNull();
  });

  it('copies out ranges, so the caller cannot change the history', () => {
    const history = sequence();
    history.appendContext({ tokens: [1, 2], roles: new Uint8Array(2), items: [] });
    history.tokens()[0] = 99;
    expect([...history.tokens()]).toEqual([1, 2]);
  });

  it('rejects a range outside the history', () => {
    expect(() => sequence().tokens(0, 1)).toThrow(RangeError);
  });
});
