// The rollout collector with the scripted aggregators as the policy (no model needed): groups come
// back in index order with G attempts (or G·N single agents for solo), problems follow a seeded
// permutation per epoch, the groups do not depend on concurrency, a policy failure marks only its
// group, and close() stops running episodes.
import { describe, expect, it } from 'vitest';
import { Collector, type CollectorOptions } from '../../src/rl/collector.js';
import { openPolicy } from '../../src/policy/open-policy.js';
import { aggregationTask } from '../../src/tasks/aggregation/task.js';
import type { Task, TaskProblem } from '../../src/tasks/index.js';
import type { Policy } from '../../src/policy/policy.js';

const settings = { workAllowance: 256, finalAllowance: 32, contextLimit: 2048, generationPieceTokens: 64, promptStyle: 'compact' as const };

async function options(overrides: Partial<CollectorOptions> = {}): Promise<CollectorOptions> {
  const problems = (await aggregationTask.loadProblems({ split: 'train' })).slice(0, 5);
  return {
    task: aggregationTask as Task<TaskProblem>,
    problems,
    policy: openPolicy({ kind: 'scripted', ...aggregationTask.demonstrator! }).policy,
    teamSize: 4,
    attempts: 3,
    solo: false,
    communication: true,
    settings,
    concurrency: 4,
    seed: 'collector-test',
    firstGroup: 0,
    ...overrides,
  };
}

function fingerprint(groups: { index: number; problem: TaskProblem; episodes: readonly { seed: string; totalTokens: number; teamSuccess: boolean }[] }[]): string {
  return JSON.stringify(groups.map((g) => [g.index, g.problem.id, g.episodes.map((e) => [e.seed, e.totalTokens, e.teamSuccess])]));
}

describe('Collector', () => {
  it('records the weights version each episode was dispatched with, and waits until idle', async () => {
    let version = 3;
    const collector = new Collector(await options({ dispatchVersion: () => version }));
    collector.grant(2);
    await collector.idle();
    version = 4;
    collector.grant(1);
    const groups = [await collector.take(), await collector.take(), await collector.take()];
    await collector.idle();
    await collector.close();
    expect(groups.map((g) => g.dispatchVersions)).toEqual([
      [3, 3, 3],
      [3, 3, 3],
      [4, 4, 4],
    ]);
  });

  it('returns granted groups in index order, G attempts each, every problem once per epoch', async () => {
    const collector = new Collector(await options());
    collector.grant(5);
    const groups = [];
    for (let i = 0; i < 5; i += 1) groups.push(await collector.take());
    await collector.close();
    expect(groups.map((g) => g.index)).toEqual([0, 1, 2, 3, 4]);
    for (const group of groups) {
      expect(group.failure).toBeNull();
      expect(group.episodes).toHaveLength(3);
      expect(group.episodes.every((e) => e.agents.length === 4 && e.teamSuccess)).toBe(true);
      expect(group.oldestVersion).toBeNull(); // scripted pieces carry no weights version
    }
    expect(new Set(groups.map((g) => g.problem.id)).size).toBe(5);
  });

  it('collects the same groups whatever the concurrency, and resumes at a given group', async () => {
    const take = async (o: CollectorOptions, count: number) => {
      const collector = new Collector(o);
      collector.grant(count);
      const groups = [];
      for (let i = 0; i < count; i += 1) groups.push(await collector.take());
      await collector.close();
      return groups;
    };
    const serial = await take(await options({ concurrency: 1 }), 4);
    const parallel = await take(await options({ concurrency: 12 }), 4);
    expect(fingerprint(parallel)).toBe(fingerprint(serial));
    const resumed = await take(await options({ firstGroup: 2 }), 2);
    expect(fingerprint(resumed)).toBe(fingerprint(serial.slice(2)));
  });

  it('runs G·N single-agent episodes without messaging for the solo learner', async () => {
    const collector = new Collector(await options({ solo: true, attempts: 2 }));
    collector.grant(1);
    const group = await collector.take();
    await collector.close();
    expect(group.episodes).toHaveLength(8);
    expect(group.episodes.every((e) => e.agents.length === 1 && !e.communication)).toBe(true);
  });

  it('marks a group whose policy failed and keeps the others', async () => {
    const base = (await options()).policy;
    let calls = 0;
    const flaky: Policy = {
      tokenizer: base.tokenizer,
      generate: (sequence, generateOptions) => {
        calls += 1;
        if (calls === 1) return Promise.reject(new Error('inference server went away'));
        return base.generate(sequence, generateOptions);
      },
    };
    const collector = new Collector(await options({ policy: flaky, concurrency: 1 }));
    collector.grant(2);
    const first = await collector.take();
    const second = await collector.take();
    await collector.close();
    expect(first.failure?.message).toMatch(/inference server went away/);
    expect(first.episodes).toHaveLength(0);
    expect(second.failure).toBeNull();
    expect(second.episodes).toHaveLength(3);
  });

  it('close() aborts running episodes and returns', async () => {
    const base = (await options()).policy;
    const stuck: Policy = {
      tokenizer: base.tokenizer,
      generate: (_sequence, generateOptions) =>
        new Promise((resolve) => generateOptions.signal?.addEventListener('abort', () => resolve({ tokens: [], logprobs: [], finish: 'cancelled' }), { once: true })),
    };
    const collector = new Collector(await options({ policy: stuck }));
    collector.grant(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await collector.close();
  });
});
