// From episodes to summary.json: measureEpisode on a hand-built aggregation trace, and summarizeSize's
// per-seed means, token efficiency SR·N·L/T̄, undefined seeds, structure shares and success by exit door,
// each worked out by hand; the result passes the summary.json validator.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { measureEpisode, summarizeSize, type EpisodeMetrics } from '../../src/eval/metrics/index.js';
import { validateSummary } from '../../src/eval/summary-validation.js';
import type { SizeSummary, Summary } from '../../src/eval/summary.js';
import { TraceBuilder } from './metrics-traces.js';

// Every field null or zero but what a test sets.
function episode(fields: Partial<EpisodeMetrics>): EpisodeMetrics {
  return {
    success: false,
    tokens: 0,
    messageCalls: 0,
    deliveries: 0,
    centralization: null,
    reciprocity: null,
    sendGini: null,
    readBeforeFirstSendShare: null,
    structure: null,
    numbersSentShare: null,
    numbersSentAndReadShare: null,
    roomOverlap: null,
    exitDoor: null,
    claims: null,
    duplicateClaims: null,
    reports: null,
    falseExhaustedReports: null,
    ...fields,
  };
}

function asSummary(task: string, size: SizeSummary, comm = true): Summary {
  return validateSummary({
    file: 'test',
    value: {
      schemaVersion: 1,
      task,
      policy: { name: 'test', description: '', model: null },
      comm,
      seeds: [1, 2],
      problems: { split: 'eval', count: 2, ids: ['p/0', 'p/1'] },
      allowance: { tokensPerAgent: 100, finalAnswerTokens: 10 },
      temperature: 1,
      createdAt: '2025-01-01T00:00:00.000Z',
      packageVersion: '0.0.0',
      sizes: { '2': size },
    },
  });
}

describe('measureEpisode (aggregation)', () => {
  it('measures success, tokens, messages, structure and number sharing', () => {
    const trace = new TraceBuilder({ task: 'aggregation', agents: ['a', 'b'], problemId: 'agg/0' });
    const fromA = trace.broadcast('a', 'My private number is twelve (12).');
    trace.read('b', [fromA]);
    trace.broadcast('b', 'Mine is 30.');
    const metrics = measureEpisode({ episode: trace.end({ success: true, tokens: [70, 50] }), problem: { id: 'agg/0', numbers: [12, 30, 99] } as never });
    expect(metrics).toEqual({
      success: true,
      tokens: 120,
      messageCalls: 2,
      deliveries: 2,
      centralization: 0,
      reciprocity: 1,
      weightedReciprocity: 1, // one message each way
      sendGini: 0,
      readBeforeFirstSendShare: 0.5, // b read a's message before sending; a did not
      readBeforeSendShare: 0.5, // of both agents, b checked its inbox before stating its number (30)
      structure: 'oneBroadcastEach',
      numbersSentShare: 1,
      numbersSentAndReadShare: 0.5, // (a → b) read; (b → a) never read: 1 of 2 pairs
      roomOverlap: null,
      exitDoor: null,
      claims: null,
      duplicateClaims: null,
      reports: null,
      falseExhaustedReports: null,
      falseReportRead: null,
      falseReportShare: null,
    });
  });

  it('counts agents that read and never send their own number as reading first (Fig. 6b), and weights reciprocity by deliveries', () => {
    const trace = new TraceBuilder({ task: 'aggregation', agents: ['a', 'b', 'c'], problemId: 'agg/0' });
    const fromA = trace.direct('a', 'b', 'I have 12.');
    trace.direct('a', 'b', 'Again: 12.');
    trace.read('b', [fromA]);
    trace.direct('b', 'a', 'Thanks, what about c?'); // b never states its 30
    trace.read('c', []); // c checks an empty inbox, then states 99
    trace.broadcast('c', '99 here.');
    const metrics = measureEpisode({ episode: trace.end(), problem: { id: 'agg/0', numbers: [12, 30, 99] } as never });
    expect(metrics.readBeforeSendShare).toBeCloseTo(2 / 3, 12); // b (never sent its number) and c; not a
    expect(metrics.readBeforeFirstSendShare).toBeCloseTo(1 / 3, 12); // among senders only b read a message first
    // w(a→b) = 2, w(b→a) = 1, w(c→a) = w(c→b) = 1: Σ min = 1 + 1 = 2 over Σ w = 5.
    expect(metrics.weightedReciprocity).toBeCloseTo(2 / 5, 12);
    expect(metrics.reciprocity).toBeCloseTo(2 / 4, 12);
  });

  it('refuses a problem other than the one the episode attempted', () => {
    const trace = new TraceBuilder({ task: 'aggregation', agents: ['a'], problemId: 'agg/0' }).end();
    expect(() => measureEpisode({ episode: trace, problem: { id: 'agg/1', numbers: [1] } as never })).toThrow(ConfigError);
    expect(() => measureEpisode({ episode: trace, problem: { id: 'agg/0' } })).toThrow(/has no valid "numbers"/);
  });
});

describe('summarizeSize', () => {
  // N = 2, L = 100. Seed 1: one success of 100 tokens and a failure of 300 (SR 0.5, T̄ 200).
  // Seed 2: two successes of 50 and 150 tokens (SR 1, T̄ 100).
  const seeds = [
    [
      episode({ success: true, tokens: 100, messageCalls: 2, centralization: 0.5, reciprocity: 1, structure: 'oneBroadcastEach', sendGini: 0 }),
      episode({ success: false, tokens: 300, messageCalls: 0, structure: 'silentAgent' }),
    ],
    [
      episode({ success: true, tokens: 50, messageCalls: 1, structure: 'silentAgent', sendGini: 0.5 }),
      episode({ success: true, tokens: 150, messageCalls: 3, structure: 'conversation', sendGini: 0.5 }),
    ],
  ];
  const size = summarizeSize({ task: 'aggregation', n: 2, tokensPerAgent: 100, communication: true, episodesBySeed: seeds });

  it('takes per-seed means over problems, failures included, then mean and SE over seeds', () => {
    expect(size.success.perSeed).toEqual([0.5, 1]);
    expect(size.success.mean).toBe(0.75);
    // sd of [0.5, 1] = 0.3536; / √2 = 0.25.
    expect(size.success.se).toBeCloseTo(0.25, 12);
    expect(size.tokens.perSeed).toEqual([200, 100]);
    expect(size.messageCalls.perSeed).toEqual([1, 2]);
  });

  it('computes token efficiency per seed as SR·N·L/T̄', () => {
    // Seed 1: 0.5·2·100/200 = 0.5. Seed 2: 1·2·100/100 = 2.
    expect(size.tokenEfficiency.perSeed).toEqual([0.5, 2]);
    expect(size.tokenEfficiency.mean).toBe(1.25);
  });

  it('skips undefined episodes and leaves a seed with none undefined', () => {
    expect(size.centralization).toMatchObject({ perSeed: [0.5, null], mean: 0.5, count: 1, se: null });
    expect(size.sendGini?.perSeed).toEqual([0, 0.5]);
  });

  it('gives each structure class its share of episodes per seed', () => {
    expect(size.structures?.silentAgent.perSeed).toEqual([0.5, 0.5]);
    expect(size.structures?.oneBroadcastEach.perSeed).toEqual([0.5, 0]);
    expect(size.structures?.conversation.perSeed).toEqual([0, 0.5]);
    expect(size.structures?.repeatedBroadcasts.perSeed).toEqual([0, 0]);
    expect(() => asSummary('aggregation', size)).not.toThrow();
  });

  it('leaves out message analyses without messaging and undefined efficiency when no token was spent', () => {
    const silent = summarizeSize({ task: 'aggregation', n: 2, tokensPerAgent: 100, communication: false, episodesBySeed: [[episode({})], [episode({ tokens: 10 })]] });
    expect(Object.keys(silent).sort()).toEqual(['centralization', 'messageCalls', 'reciprocity', 'success', 'tokenEfficiency', 'tokens']);
    expect(silent.tokenEfficiency.perSeed).toEqual([null, 0]);
    expect(silent.centralization.mean).toBeNull();
    expect(() => asSummary('aggregation', silent, false)).not.toThrow();
  });

  it('reports room overlap, success by exit door and claim counts for exploration', () => {
    const explored = summarizeSize({
      task: 'exploration',
      n: 2,
      tokensPerAgent: 100,
      communication: true,
      episodesBySeed: [
        [episode({ success: true, tokens: 10, exitDoor: 0, roomOverlap: 0.2, duplicateClaims: 1, falseExhaustedReports: 0 }), episode({ tokens: 10, exitDoor: 2, roomOverlap: 0.4, duplicateClaims: 0, falseExhaustedReports: 2 })],
        [episode({ success: true, tokens: 10, exitDoor: 0, roomOverlap: null, duplicateClaims: 3, falseExhaustedReports: 0 }), episode({ success: true, tokens: 10, exitDoor: 2, roomOverlap: 0.1, duplicateClaims: 1, falseExhaustedReports: 0 })],
      ],
    });
    expect(explored.roomOverlap?.perSeed.map((value) => value?.toFixed(6))).toEqual(['0.300000', '0.100000']);
    expect(Object.keys(explored.successByExitDoor ?? {})).toEqual(['0', '2']);
    expect(explored.successByExitDoor?.['0'].perSeed).toEqual([1, 1]);
    expect(explored.successByExitDoor?.['2'].perSeed).toEqual([0, 1]);
    expect(explored.duplicateClaims?.perSeed).toEqual([0.5, 2]);
    expect(explored.falseExhaustedReports?.perSeed).toEqual([1, 0]);
    expect(() => asSummary('exploration', explored)).not.toThrow();
  });

  it('refuses a seed without episodes', () => {
    expect(() => summarizeSize({ task: 'aggregation', n: 2, tokensPerAgent: 100, communication: true, episodesBySeed: [[]] })).toThrow(ConfigError);
  });
});
