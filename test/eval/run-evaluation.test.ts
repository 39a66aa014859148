// runEvaluation end to end with the scripted policies and the real Qwen3 tokenizer on a few held-out
// problems: the directory it writes (manifest, one record and one trace per episode), a summary that
// equals the metrics recomputed from the traces, fresh names per episode, resuming without redoing
// finished episodes, and the no-messaging population.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { measureEpisode, summarizeSize } from '../../src/eval/metrics/index.js';
import { readEpisodeLog, readTraceFile, runEvaluation, type EvaluationResult } from '../../src/eval/run/index.js';
import { openPolicy, type OpenedPolicy } from '../../src/policy/open-policy.js';
import { readSummary } from '../../src/eval/summary-file.js';
import { splitEpisodes } from '../../src/harness/index.js';
import { demonstratorOf, getTask } from '../../src/tasks/index.js';

const dataDir = await mkdtemp(join(tmpdir(), 's3-splits-'));
const aggregation = getTask('aggregation');
const exploration = getTask('exploration');
let aggregators: OpenedPolicy;
let explorers: OpenedPolicy;
let out: string;
let first: EvaluationResult;

beforeAll(async () => {
  aggregators = openPolicy({ kind: 'scripted', ...demonstratorOf(getTask('aggregation')) });
  explorers = openPolicy({ kind: 'scripted', ...demonstratorOf(getTask('exploration')) });
  out = await mkdtemp(join(tmpdir(), 's3-eval-'));
  first = await runEvaluation({ task: aggregation, policy: aggregators, out, sizes: [4, 1], seeds: 2, problems: 3, dataDir, concurrency: 4 });
});

describe('runEvaluation', () => {
  it('runs one episode per (size, seed, problem) and records each with its trace', async () => {
    expect(first.episodesRun).toBe(2 * 2 * 3);
    expect(first.episodesReused).toBe(0);
    const { records } = await readEpisodeLog(join(out, 'episodes.jsonl'));
    expect(records).toHaveLength(12);
    expect(new Set(records.map((record) => record.episodeSeed)).size).toBe(12);
    for (const record of records) expect(record.episodeSeed).toBe(`eval/${record.seed}/${record.problemId}/${record.n}`);
    const manifest = JSON.parse(await readFile(join(out, 'eval.json'), 'utf8'));
    expect(manifest).toMatchObject({ task: 'aggregation', comm: true, temperature: 1, allowance: { tokensPerAgent: 8192, finalAnswerTokens: 1024 }, split: 'eval' });
  });

  it('writes a valid summary with the protocol settings: sorted sizes, seeds 1..k, the first k problems', async () => {
    const summary = await readSummary(join(out, 'summary.json'));
    expect(Object.keys(summary.sizes)).toEqual(['1', '4']);
    expect(summary.seeds).toEqual([1, 2]);
    const problems = await aggregation.loadProblems({ split: 'eval', dataDir });
    expect(summary.problems).toEqual({ split: 'eval', count: 3, ids: problems.slice(0, 3).map((problem) => problem.id) });
    expect(summary.policy).toMatchObject({ name: 'scripted', model: null });
    // Scripted aggregators solve alone only at N = 1 (their own number is the list) and always at N = 4.
    expect(summary.sizes['1'].success.mean).toBe(1);
    expect(summary.sizes['4'].success.mean).toBe(1);
    expect(summary.sizes['4'].structures?.oneBroadcastEach.mean).toBe(1);
    expect(summary.sizes['4'].centralization.mean).toBe(0);
    expect(summary.sizes['4'].reciprocity.mean).toBe(1);
    expect(summary.sizes['4'].messageCalls.mean).toBe(4);
    expect(summary.sizes['4'].deliveries?.mean).toBe(12);
    expect(summary.sizes['1'].centralization).toMatchObject({ mean: null, count: 0 });
  });

  it('summarizes exactly the metrics recomputed from the trace files', async () => {
    const problems = await aggregation.loadProblems({ split: 'eval', dataDir });
    const { records } = await readEpisodeLog(join(out, 'episodes.jsonl'));
    for (const n of [1, 4]) {
      const episodesBySeed = await Promise.all(
        [1, 2].map((seed) =>
          Promise.all(
            problems.slice(0, 3).map(async (problem) => {
              const record = records.find((entry) => entry.seed === seed && entry.n === n && entry.problemId === problem.id);
              const [episode] = splitEpisodes(await readTraceFile(join(out, record?.trace ?? 'missing')));
              expect(episode.start.seed).toBe(`eval/${seed}/${problem.id}/${n}`);
              return measureEpisode({ episode, problem });
            }),
          ),
        ),
      );
      expect(first.summary.sizes[String(n)]).toEqual(summarizeSize({ task: 'aggregation', n, tokensPerAgent: 8192 + 1024, communication: true, episodesBySeed }));
    }
  });

  it('draws fresh names for every episode', async () => {
    const { records } = await readEpisodeLog(join(out, 'episodes.jsonl'));
    const teams = await Promise.all(
      records.filter((record) => record.n === 4).map(async (record) => splitEpisodes(await readTraceFile(join(out, record.trace)))[0].start.agentNames.join(',')),
    );
    expect(new Set(teams).size).toBe(teams.length);
  });

  it('resumes: redoes only the episodes missing from episodes.jsonl (an interrupted last line included)', async () => {
    const path = join(out, 'episodes.jsonl');
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    await writeFile(path, `${lines.slice(0, -3).join('\n')}\n${lines[lines.length - 3].slice(0, 40)}`);
    const resumed = await runEvaluation({ task: aggregation, policy: aggregators, out, sizes: [1, 4], seeds: 2, problems: 3, dataDir });
    expect(resumed.episodesRun).toBe(3);
    expect(resumed.episodesReused).toBe(9);
    expect(resumed.summary.sizes).toEqual(first.summary.sizes);
    expect((await readEpisodeLog(path)).records).toHaveLength(12);
  });

  it('extends an evaluation with more seeds, reusing the finished ones', async () => {
    const extended = await runEvaluation({ task: aggregation, policy: aggregators, out, sizes: [4], seeds: 3, problems: 3, dataDir });
    expect(extended.episodesRun).toBe(3);
    expect(extended.episodesReused).toBe(6);
    expect(extended.summary.sizes['4'].success.perSeed).toEqual([1, 1, 1]);
  });

  it('refuses to resume with other settings, before running anything', async () => {
    await expect(runEvaluation({ task: aggregation, policy: aggregators, out, sizes: [4], seeds: 2, problems: 3, dataDir, communication: false })).rejects.toThrow(
      /holds an evaluation with comm true, but this run asks for false/,
    );
  });

  it('refuses bad protocol settings with the flag named', async () => {
    const options = { task: aggregation, policy: aggregators, out, dataDir };
    await expect(runEvaluation({ ...options, sizes: [2, 2] })).rejects.toThrow(/--sizes lists a team size twice/);
    await expect(runEvaluation({ ...options, sizes: [65] })).rejects.toThrow(ConfigError);
    await expect(runEvaluation({ ...options, seeds: 0 })).rejects.toThrow(/--seeds must be an integer in 1\.\./);
    await expect(runEvaluation({ ...options, problems: 33 })).rejects.toThrow(/--problems 33 exceeds the 32 problems/);
  });

  it('runs exploration without messaging as a population: no messages, room overlap, exit doors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 's3-eval-'));
    const result = await runEvaluation({ task: exploration, policy: explorers, out: dir, sizes: [2], seeds: 2, problems: 2, dataDir, communication: false });
    const size = result.summary.sizes['2'];
    expect(result.summary.comm).toBe(false);
    expect(result.summary.temperature).toBe(0.7);
    expect(size.messageCalls.perSeed).toEqual([0, 0]);
    expect(size.centralization.mean).toBeNull();
    expect(size.roomOverlap?.count).toBe(2);
    expect(Object.keys(size.successByExitDoor ?? {}).length).toBeGreaterThan(0);
    expect(size.duplicateClaims).toBeUndefined();
  });
});
