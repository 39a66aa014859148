// Qwen3's thinking mode off end to end with the s3-mini tokenizer: every generation prompt the
// harness appends ends in the empty reasoning block of the chat template's enable_thinking=false, as
// context (never sampled); scripted agents then write no reasoning of their own and solve both tasks
// exactly as with thinking on; the settings and the trace record the mode only when it is off.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { resolveEpisodeSettings, runEpisode, type AgentResult } from '../../src/harness/index.js';
import { loadBuiltinTokenizer } from '../../src/model/s3-mini-tokenizer.js';
import { TOKEN_ROLE_CODE } from '../../src/policy/agent-sequence.js';
import { ScriptedPolicy } from '../../src/policy/index.js';
import { aggregationTask, explorationTask, aggregatorScript, explorerScript } from '../../src/tasks/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 's3-splits-'));
const tokenizer = loadBuiltinTokenizer();
const EMPTY_REASONING = '<|im_start|>assistant\n<think>\n\n</think>\n\n';

/** The agent's history as text, and its sampled text alone. */
function texts(agent: AgentResult): { history: string; sampled: string } {
  const tokens = Array.from(agent.sequence.tokens());
  const roles = agent.sequence.roles();
  const sampled = tokens.filter((_, i) => roles[i] === TOKEN_ROLE_CODE.sampled);
  return { history: tokenizer.decode(tokens), sampled: tokenizer.decode(sampled) };
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('thinking mode off', () => {
  it('pre-fills the empty reasoning block in every generation prompt, as context', async () => {
    const [problem] = await aggregationTask.loadProblems({ split: 'train', dataDir });
    const policy = new ScriptedPolicy({ tokenizer, script: aggregatorScript });
    const off = await runEpisode({ task: aggregationTask, problem, n: 3, policy, seed: 'think', thinking: false });
    const on = await runEpisode({ task: aggregationTask, problem, n: 3, policy, seed: 'think' });
    for (const agent of off.agents) {
      const { history, sampled } = texts(agent);
      expect(count(history, '<|im_start|>assistant\n')).toBeGreaterThan(1);
      expect(count(history, EMPTY_REASONING)).toBe(count(history, '<|im_start|>assistant\n'));
      expect(sampled).not.toContain('<think>');
    }
    for (const agent of on.agents) {
      const { history, sampled } = texts(agent);
      expect(history).not.toContain(EMPTY_REASONING);
      expect(count(sampled, '<think>')).toBeGreaterThan(0);
    }
    // The same decisions, fewer sampled tokens (no reasoning lines).
    expect(off.teamSuccess).toBe(on.teamSuccess);
    expect(off.agents.map((a) => a.answer)).toEqual(on.agents.map((a) => a.answer));
    expect(off.totalTokens).toBeLessThan(on.totalTokens);
  });

  it('solves scripted teams of both tasks as often as thinking on', async () => {
    for (const [task, script] of [[aggregationTask, aggregatorScript], [explorationTask, explorerScript]] as const) {
      const problems = (await task.loadProblems({ split: 'eval', dataDir })).slice(0, 4);
      const policy = new ScriptedPolicy({ tokenizer, script });
      for (const problem of problems) {
        const off = await runEpisode({ task, problem, n: 4, policy, seed: 'solve', thinking: false });
        const on = await runEpisode({ task, problem, n: 4, policy, seed: 'solve' });
        expect(off.teamSuccess).toBe(on.teamSuccess);
      }
    }
  });

  it('is recorded in the settings and episode_start only when off', async () => {
    const [problem] = await aggregationTask.loadProblems({ split: 'train', dataDir });
    const policy = new ScriptedPolicy({ tokenizer, script: aggregatorScript });
    const off = await runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 'rec', thinking: false });
    const on = await runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 'rec', thinking: true });
    expect(off.settings.thinking).toBe(false);
    expect(on.settings).not.toHaveProperty('thinking');
    const start = off.trace[0];
    expect(start.type === 'episode_start' && start.settings.thinking).toBe(false);
    expect(resolveEpisodeSettings('aggregation', {})).not.toHaveProperty('thinking');
    expect(() => resolveEpisodeSettings('aggregation', { thinking: 'no' as unknown as boolean })).toThrow(ConfigError);
  });
});
