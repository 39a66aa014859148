// `swarm task inspect exploration --json` reproduces Table 3 for d = 2 and d = 3; other tasks (built-in or
// a module path) are described by their facts, and `--split/--problem` loads their problems.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const inspect = (args: string[]) => JSON.parse(execFileSync(process.execPath, [swarm, 'task', 'inspect', 'exploration', ...args, '--json']).toString());

describe('swarm task inspect exploration', () => {
  it.each([
    [2, 121, 9, 20, 240],
    [3, 391, 27, 30, 780],
  ])('matches Table 3 at depth %i', (depth, rooms, deadEnds, shortest, dfs) => {
    for (const seed of ['1', '2', '17']) {
      const facts = inspect(['--depth', String(depth), '--seed', seed]);
      expect(facts).toMatchObject({ rooms, deadEnds, shortestPathMoves: shortest, fullDfsMoves: dfs });
      expect([0, 1, 2]).toContain(facts.exitDoorAtFirstFork);
    }
  });

  it('gives the same tree for the same seed and another for another seed', () => {
    expect(inspect(['--seed', '5'])).toEqual(inspect(['--seed', '5']));
    expect(inspect(['--seed', '5']).exit).not.toEqual(inspect(['--seed', '6']).exit);
  });

  it('refuses a malformed depth with a message naming the flag', () => {
    const result = spawnSync(process.execPath, [swarm, 'task', 'inspect', 'exploration', '--depth', 'three'], { encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/--depth must be an integer, got "three"/);
  });
});

describe('swarm task inspect on other tasks', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [swarm, 'task', 'inspect', ...args], { encoding: 'utf8', cwd: packageRoot });

  it('describes a task module by its facts and prints one problem of a split', () => {
    const described = JSON.parse(run(['./examples/tasks/meeting-hour.mjs', '--json']).stdout);
    expect(described).toMatchObject({ name: 'meeting-hour', family: null, defaults: { workAllowance: 1024, finalAllowance: 64 } });
    expect(described.metrics.map((m: { name: string }) => m.name)).toEqual(['agentAccuracy', 'calendarsSharedShare', 'heardEveryoneShare']);
    const problem = JSON.parse(run(['./examples/tasks/meeting-hour.mjs', '--split', 'eval', '--problem', '3', '--json']).stdout);
    expect(problem.split).toMatchObject({ split: 'eval', index: 3, problem: { id: 'meeting-hour/eval/0003' } });
    const size = JSON.parse(run(['aggregation', '--split', 'dev', '--json']).stdout);
    expect(size).toMatchObject({ name: 'aggregation', family: 'aggregation', split: { split: 'dev', firstId: 'aggregation/dev/00' } });
    expect(size.split.count).toBeGreaterThan(0);
  });

  it('refuses tree flags outside the exploration family and a problem past the split', () => {
    const depth = run(['aggregation', '--depth', '2']);
    expect(depth.status).toBe(1);
    expect(depth.stderr).toMatch(/task "aggregation" is not of the exploration family/);
    const past = run(['./examples/tasks/meeting-hour.mjs', '--split', 'dev', '--problem', '32']);
    expect(past.status).toBe(1);
    expect(past.stderr).toMatch(/--problem must be below the split's 32 problems, got 32/);
    expect(run(['no-such-task']).stderr).toMatch(/Unknown task "no-such-task"/);
  });
});
