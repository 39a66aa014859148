// Scripted teams end to end on the held-out problems with the real Qwen3 tokenizer: aggregation
// agents solve (nearly) every problem at N = 4, 8 and 16, and communicating explorers reach the exit
// more often, with lower room overlap, than the same explorers without messages at the same
// allowance (Appendix L's explorers on depth-3 trees; overlap as in Appendix M).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/harness/index.js';
import { ScriptedPolicy } from '../../src/policy/index.js';
import { aggregationTask, explorationTask, aggregatorScript, explorerScript } from '../../src/tasks/index.js';
import { qwen3Tokenizer, roomOverlap } from './helpers.js';

const dataDir = mkdtempSync(join(tmpdir(), 's3-splits-'));
const tokenizer = qwen3Tokenizer();

describe('scripted aggregation teams', () => {
  const policy = new ScriptedPolicy({ tokenizer, script: aggregatorScript });

  for (const n of [4, 8, 16]) {
    it(`solve at least 99% of the evaluation problems at N = ${n}`, async () => {
      const problems = await aggregationTask.loadProblems({ split: 'eval', dataDir });
      const results = await Promise.all(problems.map((problem, index) => runEpisode({ task: aggregationTask, problem, n, policy, seed: `eval/${n}/${index}` })));
      const solved = results.filter((result) => result.teamSuccess).length / results.length;
      expect(solved).toBeGreaterThanOrEqual(0.99);
      for (const result of results) expect(result.agents.every((agent) => agent.workTokens <= 8192)).toBe(true);
    });
  }

  it('answer with only their own number without communication', async () => {
    const [problem] = await aggregationTask.loadProblems({ split: 'eval', dataDir });
    const result = await runEpisode({ task: aggregationTask, problem, n: 4, policy, seed: 'solo', communication: false });
    expect(result.teamSuccess).toBe(false);
    expect(result.agents.map((agent) => agent.answer)).toEqual(problem.numbers.slice(0, 4).map((value) => `[${value}]`));
  });
});

describe('scripted explorers on depth-3 trees', () => {
  it('reach the exit more often and overlap less with messages than without, at the same allowance', async () => {
    const policy = new ScriptedPolicy({ tokenizer, script: explorerScript });
    const problems = await explorationTask.loadProblems({ split: 'eval', dataDir });
    const measure = async (communication: boolean) => {
      const results = await Promise.all(
        problems.map((problem, index) => runEpisode({ task: explorationTask, problem, n: 4, policy, seed: `eval/${index}`, communication, workAllowance: 8192 })),
      );
      return {
        success: results.filter((result) => result.teamSuccess).length / results.length,
        overlap: results.reduce((total, result) => total + roomOverlap(result.trace), 0) / results.length,
      };
    };
    const withMessages = await measure(true);
    const without = await measure(false);
    expect(withMessages.success).toBeGreaterThan(without.success);
    expect(withMessages.overlap).toBeLessThan(without.overlap);
  });
});
