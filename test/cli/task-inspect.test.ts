// `swarm task inspect exploration --json` reproduces Table 3 for d = 2 and d = 3.
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
