// takeUpdateGroups, the groups one RL update trains on: stale groups dropped and failed ones
// recollected (each replaced by a newly granted group, a warning per failure), and a run whose groups
// keep failing stopped after 2M failures in a row with the failure's message, through the real
// collector with a policy that fails on every call (before this bound the loop recollected forever,
// in promise callbacks, printing nothing).
import { afterEach, describe, expect, it } from 'vitest';
import { openPolicy } from '../../src/policy/open-policy.js';
import type { Policy } from '../../src/policy/policy.js';
import { Collector, type RolloutGroup } from '../../src/rl/collector.js';
import { takeUpdateGroups } from '../../src/rl/update-groups.js';
import { aggregationTask } from '../../src/tasks/aggregation/task.js';
import type { Task, TaskProblem } from '../../src/tasks/index.js';

const warnings: string[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning.message);
};
process.on('warning', onWarning);
afterEach(() => {
  warnings.length = 0;
});

/** A collector stand-in handing out `groups` in order and counting grants. */
function scripted(groups: Partial<RolloutGroup>[]): { take: () => Promise<RolloutGroup>; grant: (n: number) => void; granted: () => number } {
  let next = 0;
  let granted = 0;
  return {
    take: async () => ({ index: next, episodes: [], oldestVersion: 0, newestVersion: 0, dispatchVersions: [], failure: null, problem: undefined as never, ...groups[next++] }),
    grant: (n) => {
      granted += n;
    },
    granted: () => granted,
  };
}

describe('takeUpdateGroups', () => {
  it('drops groups past the policy lag and recollects failed ones, granting one group for each', async () => {
    const collector = scripted([{ oldestVersion: 1 }, { failure: new Error('server went away') }, { oldestVersion: 5 }, { oldestVersion: 4 }]);
    const taken = await takeUpdateGroups(collector, { groups: 2, version: 6, maxPolicyLag: 4, update: 7 });
    expect(taken.groups.map((g) => g.index)).toEqual([2, 3]);
    expect(taken.lags).toEqual([1, 2]);
    expect(taken).toMatchObject({ dropped: 1, failed: 1 });
    expect(collector.granted()).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toEqual(['rollout group 1 failed and is recollected: server went away']);
  });

  it('counts failures in a row only: a group that comes back resets the count', async () => {
    const failure = { failure: new Error('blip') };
    const collector = scripted([failure, failure, failure, {}, failure, failure, failure, {}]);
    const taken = await takeUpdateGroups(collector, { groups: 2, version: 0, maxPolicyLag: 4, update: 1 });
    expect(taken.groups.map((g) => g.index)).toEqual([3, 7]);
    expect(taken.failed).toBe(6);
  });

  it('stops after 2M groups in a row failed, with the last failure, through the real collector', async () => {
    const problems = (await aggregationTask.loadProblems({ split: 'train' })).slice(0, 5);
    const base = openPolicy({ kind: 'scripted', ...aggregationTask.demonstrator! }).policy;
    const broken: Policy = { tokenizer: base.tokenizer, generate: () => Promise.reject(new RangeError('token 0 is 151644, outside the vocabulary [0, 512)')) };
    const collector = new Collector({
      task: aggregationTask as Task<TaskProblem>,
      problems,
      policy: broken,
      teamSize: 2,
      attempts: 2,
      solo: false,
      communication: true,
      settings: { workAllowance: 64, finalAllowance: 16, contextLimit: 2048, generationPieceTokens: 32, promptStyle: 'compact' },
      concurrency: 4,
      seed: 'update-groups-test',
      firstGroup: 0,
    });
    collector.grant(6);
    await expect(takeUpdateGroups(collector, { groups: 3, version: 0, maxPolicyLag: 4, update: 2 })).rejects.toThrow(
      '6 rollout groups in a row failed (update 2); the last: token 0 is 151644, outside the vocabulary [0, 512). Completed updates are kept: fix the cause and continue with --resume.',
    );
    await collector.close();
    expect(warnings).toHaveLength(5);
  });
});
