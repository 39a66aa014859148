// The Trainer's per-token coefficients (Eq. 3) on hand-built histories: A_g · 1/|T_g| · 1/|B| on
// sampled tokens, shifted one left (coef[t] weights tokens[t+1]), 0 on context.
import { describe, expect, it } from 'vitest';
import { AgentSequence } from '../../src/policy/agent-sequence.js';
import { trainSequences } from '../../src/rl/train-sequences.js';
import { history } from './helpers.js';

describe('trainSequences', () => {
  // Team 1 (advantage 2): a generates 3 tokens, b generates 1, so |T_1| = 4. Team 2 (advantage −1): c generates 2, |T_2| = 2. |B| = 2.
  const a = history('a', [{ context: [10, 11] }, { sampled: [20, 21], logprobs: [-0.5, -0.25] }, { context: [12] }, { sampled: [22], logprobs: [-1] }]);
  const b = history('b', [{ context: [13] }, { sampled: [23], logprobs: [-2] }]);
  const c = history('c', [{ context: [14] }, { sampled: [24, 25], logprobs: [-0.75, -0.125] }]);
  const sequences = trainSequences([
    { members: [{ sequence: a, weight: 2 }, { sequence: b, weight: 2 }] },
    { members: [{ sequence: c, weight: -1 }] },
  ]);

  it('gives one sequence per member with every token', () => {
    expect(sequences.map((s) => s.tokens)).toEqual([[10, 11, 20, 21, 12, 22], [13, 23], [14, 24, 25]]);
  });

  it('puts A_g/|T_g|/|B| on the index before each sampled token and 0 on context', () => {
    // Team 1: 2 / 4 / 2 = 0.25 on positions 2, 3, 5 → indices 1, 2, 4.
    expect(sequences[0].coef).toEqual([0, 0.25, 0.25, 0, 0.25]);
    expect(sequences[1].coef).toEqual([0.25]);
    // Team 2: −1 / 2 / 2 = −0.25.
    expect(sequences[2].coef).toEqual([-0.25, -0.25]);
  });

  it('has one coefficient fewer than tokens', () => {
    for (const s of sequences) expect(s.coef.length).toBe(s.tokens.length - 1);
  });

  it('carries the sampler log-probs aligned with the coefficients, 0 elsewhere', () => {
    expect(sequences[0].oldLogprobs).toEqual([0, -0.5, -0.25, 0, -1]);
    expect(sequences[1].oldLogprobs).toEqual([-2]);
    expect(sequences[2].oldLogprobs).toEqual([-0.75, -0.125]);
  });

  it('weighs teams equally however many tokens they generate', () => {
    const team = (s: { coef: readonly number[] }[]) => s.reduce((sum, x) => sum + x.coef.reduce((t, v) => t + Math.abs(v), 0), 0);
    expect(team(sequences.slice(0, 2)) / 2).toBeCloseTo(team(sequences.slice(2)), 12);
  });

  it('gives all-zero coefficients to a zero-advantage team but keeps it in |B|', () => {
    const out = trainSequences([{ members: [{ sequence: b, weight: 0 }] }, { members: [{ sequence: c, weight: 1 }] }]);
    expect(out[0].coef).toEqual([0]);
    expect(out[1].coef).toEqual([0.25, 0.25]);
  });

  it('leaves out empty histories and gives 0 to a unit that generated nothing', () => {
    const empty = history('e', []);
    const silent = history('s', [{ context: [1, 2] }]);
    const out = trainSequences([{ members: [{ sequence: empty, weight: 1 }, { sequence: silent, weight: 1 }] }]);
    expect(out).toEqual([{ tokens: [1, 2], coef: [0], oldLogprobs: [0] }]);
  });
});

describe('trainSequences options', () => {
  it('gives KL weights 1/|T_g|/|B| on generated tokens whatever the advantage, and draws aligned with their predictions', () => {
    const a = history('a', [{ context: [1, 2] }, { sampled: [3, 4], logprobs: [-1, -2] }]);
    const [withKl] = trainSequences([{ members: [{ sequence: a, weight: 0 }] }], { klWeights: true });
    expect(withKl.coef).toEqual([0, 0, 0]);
    expect(withKl.klWeight).toEqual([0, 0.5, 0.5]);
    const b = new AgentSequence({ agentIndex: 0, agentName: 'b', samplingSeed: 1n });
    b.appendContext({ tokens: [9], roles: new Uint8Array([0]), items: [] });
    b.appendSampled({ tokens: [5, 6], logprobs: [-1, -1], finish: 'stop', draws: { tokens: [10, 11, 12, 13], logprobs: [-0.1, -0.2, -0.3, -0.4] } });
    const [withDraws] = trainSequences([{ members: [{ sequence: b, weight: 1 }] }], { draws: 2 });
    expect(withDraws.draws?.tokens).toEqual([10, 11, 12, 13]);
    expect(withDraws.draws?.logprobs.map((x) => Math.round(x * 10) / 10)).toEqual([-0.1, -0.2, -0.3, -0.4]);
  });
});
