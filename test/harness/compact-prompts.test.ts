// The compact prompt style end to end with the s3-mini tokenizer (the CPU default): the opening prompts'
// token counts at N = 4 against the paper's, the style recorded in episode_start only when it is not
// the paper's, and the scripted agents, which read tool outputs rather than prose, solving both tasks
// as well as with the paper's prompts.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { resolveEpisodeSettings, runEpisode, type EpisodeResult, type TraceEvent } from '../../src/harness/index.js';
import { loadBuiltinTokenizer } from '../../src/model/s3-mini-tokenizer.js';
import { ScriptedPolicy } from '../../src/policy/index.js';
import { aggregationTask, explorationTask, type PromptStyle, aggregatorScript, explorerScript } from '../../src/tasks/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 's3-splits-'));
const tokenizer = loadBuiltinTokenizer();
const aggregators = new ScriptedPolicy({ tokenizer, script: aggregatorScript });
const explorers = new ScriptedPolicy({ tokenizer, script: explorerScript });

/** Measured at N = 4 (s3-mini tokenizer): compact 375 and 123 tokens, paper 1,007 and 324 (messaging on, off). */
const AGGREGATION_PROMPT_BOUND = { messaging: 380, alone: 130 };
/** Measured at N = 4 (s3-mini tokenizer): compact 507 and 339 tokens, paper 1,207 and 609 (messaging on, off). */
const EXPLORATION_PROMPT_BOUND = { messaging: 515, alone: 345 };

const promptTokens = (trace: readonly TraceEvent[]): number[] => trace.flatMap((event) => (event.type === 'prompt' ? [event.tokens] : []));
const successRate = (results: readonly EpisodeResult[]): number => results.filter((result) => result.teamSuccess).length / results.length;
const styleOption = (promptStyle: PromptStyle): { promptStyle?: PromptStyle } => (promptStyle === 'paper' ? {} : { promptStyle });

describe('compact prompt token counts at N = 4', () => {
  it('aggregation prompts stay under the bound and under 40% of the paper\'s', async () => {
    const [problem] = await aggregationTask.loadProblems({ split: 'train', dataDir });
    for (const communication of [true, false]) {
      const run = (promptStyle: PromptStyle) =>
        runEpisode({ task: aggregationTask, problem, n: 4, policy: aggregators, seed: 'count', communication, ...styleOption(promptStyle) });
      const compact = promptTokens((await run('compact')).trace);
      const paper = promptTokens((await run('paper')).trace);
      const bound = communication ? AGGREGATION_PROMPT_BOUND.messaging : AGGREGATION_PROMPT_BOUND.alone;
      for (const [index, tokens] of compact.entries()) {
        expect(tokens).toBeLessThanOrEqual(bound);
        expect(tokens).toBeLessThan(0.4 * paper[index]);
      }
    }
  });

  it('exploration prompts stay under the bound and under 60% of the paper\'s', async () => {
    const [problem] = await explorationTask.loadProblems({ split: 'train', dataDir });
    for (const communication of [true, false]) {
      const run = (promptStyle: PromptStyle) =>
        runEpisode({ task: explorationTask, problem, n: 4, policy: explorers, seed: 'count', communication, ...styleOption(promptStyle) });
      const compact = promptTokens((await run('compact')).trace);
      const paper = promptTokens((await run('paper')).trace);
      const bound = communication ? EXPLORATION_PROMPT_BOUND.messaging : EXPLORATION_PROMPT_BOUND.alone;
      for (const [index, tokens] of compact.entries()) {
        expect(tokens).toBeLessThanOrEqual(bound);
        expect(tokens).toBeLessThan(0.6 * paper[index]);
      }
    }
  });
});

describe('the prompt style in settings and traces', () => {
  it('is recorded in episode_start only when compact, so paper traces are unchanged', async () => {
    const [problem] = await aggregationTask.loadProblems({ split: 'train', dataDir });
    const byDefault = await runEpisode({ task: aggregationTask, problem, n: 3, policy: aggregators, seed: 'style' });
    const paper = await runEpisode({ task: aggregationTask, problem, n: 3, policy: aggregators, seed: 'style', promptStyle: 'paper' });
    const compact = await runEpisode({ task: aggregationTask, problem, n: 3, policy: aggregators, seed: 'style', promptStyle: 'compact' });
    expect(paper.trace).toEqual(byDefault.trace);
    expect(byDefault.settings).not.toHaveProperty('promptStyle');
    expect(compact.settings.promptStyle).toBe('compact');
    expect(compact.trace[0]).toMatchObject({ type: 'episode_start', settings: { promptStyle: 'compact' } });
  });

  it('rejects an unknown style before any agent runs', () => {
    expect(() => resolveEpisodeSettings('aggregation', { promptStyle: 'tiny' as PromptStyle })).toThrow(ConfigError);
    expect(() => resolveEpisodeSettings('aggregation', { promptStyle: 'tiny' as PromptStyle })).toThrow(/promptStyle/);
  });
});

describe('scripted agents with compact prompts', () => {
  it('aggregators solve every one of 16 training problems at N = 4', async () => {
    const problems = (await aggregationTask.loadProblems({ split: 'train', dataDir })).slice(0, 16);
    const results = await Promise.all(
      problems.map((problem, index) =>
        runEpisode({ task: aggregationTask, problem, n: 4, policy: aggregators, seed: `compact/${index}`, promptStyle: 'compact' }),
      ),
    );
    expect(successRate(results)).toBe(1);
  });

  it('explorers reach the exit as often as with the paper prompts at N = 4', async () => {
    const problems = (await explorationTask.loadProblems({ split: 'eval', dataDir })).slice(0, 16);
    const rate = async (promptStyle: PromptStyle): Promise<number> =>
      successRate(
        await Promise.all(
          problems.map((problem, index) =>
            runEpisode({ task: explorationTask, problem, n: 4, policy: explorers, seed: `compact/${index}`, ...styleOption(promptStyle) }),
          ),
        ),
      );
    const paper = await rate('paper');
    const compact = await rate('compact');
    expect(Math.abs(compact - paper)).toBeLessThanOrEqual(2 / 16);
    expect(compact).toBeGreaterThan(0.5);
  });
});
