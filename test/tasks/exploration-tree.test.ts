// Tests of search-tree generation (Appendix H, Table 3), tree facts, branch helpers and tree JSON.
import { describe, expect, it } from 'vitest';
import { exitDoorPositions, inspectTree, orderedDfsMovesToExit } from '../../src/tasks/exploration/inspect.js';
import {
  branchHoldsExit,
  branchRooms,
  exitPath,
  firstForkBranch,
  onwardDoors,
  pathFromStart,
  wayBack,
} from '../../src/tasks/exploration/tree-index.js';
import { treeFromJson, treeToJson } from '../../src/tasks/exploration/tree-json.js';
import { generateTree, labelDigits, treeRoomCount, type ExplorationTree } from '../../src/tasks/exploration/tree.js';
import { createRng } from '../../src/common/random.js';

const SEEDS = [1, 2, 3, 17, 'paper'];

describe('generateTree matches Table 3', () => {
  it.each([
    [2, 121, 9, 20, 240],
    [3, 391, 27, 30, 780],
  ])('depth %i: %i rooms, %i dead ends, %i shortest-path moves, %i full-DFS moves', (depth, rooms, deadEnds, shortest, dfs) => {
    expect(treeRoomCount({ depth })).toBe(rooms);
    for (const seed of SEEDS) {
      const facts = inspectTree(generateTree({ depth, rng: createRng(seed) }));
      expect(facts).toMatchObject({ depth, rooms, deadEnds, shortestPathMoves: shortest, fullDfsMoves: dfs });
      expect([0, 1, 2]).toContain(facts.exitDoorAtFirstFork);
      expect(facts.exitDoorPositions).toHaveLength(depth);
    }
  });
});

describe('tree structure', () => {
  const tree = generateTree({ depth: 3, rng: createRng('structure') });

  it('uses unique R-labels of four digits for depth 3, more for deeper trees', () => {
    expect(labelDigits(121)).toBe(4);
    expect(labelDigits(391)).toBe(4);
    expect(labelDigits(1201)).toBe(5);
    for (const room of tree.doors.keys()) expect(room).toMatch(/^R[1-9]\d{3}$/);
    expect(tree.doors.size).toBe(391);
    const deep = generateTree({ depth: 4, rng: createRng('deep') });
    expect(deep.doors.size).toBe(1201);
    for (const room of deep.doors.keys()) expect(room).toMatch(/^R[1-9]\d{4}$/);
  });

  it('has passages both ways', () => {
    for (const [room, doors] of tree.doors) for (const door of doors) expect(tree.doors.get(door)).toContain(room);
  });

  it('gives the start b doors, junctions a way back plus b, corridor rooms two, dead ends one', () => {
    const degreeCounts = new Map<number, number>();
    for (const doors of tree.doors.values()) degreeCounts.set(doors.length, (degreeCounts.get(doors.length) ?? 0) + 1);
    // By hand: the start has 3 doors; 3 + 9 = 12 junctions have 4; 27 dead ends have 1; the other
    // 391 - 1 - 12 - 27 = 351 corridor rooms have 2.
    expect(Object.fromEntries(degreeCounts)).toEqual({ 3: 1, 4: 12, 1: 27, 2: 351 });
    expect(tree.doors.get(tree.start)).toHaveLength(3);
    expect(tree.doors.get(tree.exit)).toHaveLength(1);
  });

  it('places junctions every 10 moves along the exit path', () => {
    const path = exitPath(tree);
    expect(path).toHaveLength(31);
    expect(path[0]).toBe(tree.start);
    expect(path[30]).toBe(tree.exit);
    path.forEach((room, index) => {
      const expected = index === 0 ? 3 : index === 30 ? 1 : index % 10 === 0 ? 4 : 2;
      expect(tree.doors.get(room)).toHaveLength(expected);
    });
  });

  it('is reproduced by its seed and differs across seeds', () => {
    const again = generateTree({ depth: 3, rng: createRng('structure') });
    expect(treeToJson(again)).toEqual(treeToJson(tree));
    expect(generateTree({ depth: 3, rng: createRng('other') }).start).not.toBe(tree.start);
  });

  it('chooses the exit uniformly over the first fork (counts over 270 seeds)', () => {
    const counts = [0, 0, 0];
    for (let seed = 0; seed < 270; seed += 1) counts[inspectTree(generateTree({ depth: 3, rng: createRng(seed) })).exitDoorAtFirstFork] += 1;
    for (const count of counts) expect(count).toBeGreaterThan(60);
    expect(counts[0] + counts[1] + counts[2]).toBe(270);
  });

  it('defines exitDoorAtFirstFork as the listed position of the start door toward the exit', () => {
    const facts = inspectTree(tree);
    expect(tree.doors.get(tree.start)?.[facts.exitDoorAtFirstFork]).toBe(exitPath(tree)[1]);
    expect(facts.orderedDfsMovesToExit).toBeGreaterThanOrEqual(30);
    expect(facts.orderedDfsMovesToExit).toBeLessThanOrEqual(750);
  });

  it('splits the tree into three first-fork branches of 130 rooms, one holding the exit', () => {
    const doors = tree.doors.get(tree.start) ?? [];
    const holders = doors.filter((entry) => branchHoldsExit(tree, { junction: tree.start, entry }));
    expect(holders).toEqual([exitPath(tree)[1]]);
    for (const entry of doors) {
      const rooms = branchRooms(tree, { junction: tree.start, entry }) ?? [];
      expect(rooms).toHaveLength(130);
      for (const room of rooms) expect(firstForkBranch(tree, room)).toBe(entry);
    }
  });
});

/**
 * A hand-built tree (d = 1, b = 2, c = 2):   R1000 ─ R2000 ─ R2001        (doors of R1000 listed [R2000, R3000])
 *                                                 └ R3000 ─ R3001 (exit)
 */
const small: ExplorationTree = {
  depth: 1,
  branching: 2,
  corridorLength: 2,
  start: 'R1000',
  exit: 'R3001',
  doors: new Map([
    ['R1000', ['R2000', 'R3000']],
    ['R2000', ['R1000', 'R2001']],
    ['R2001', ['R2000']],
    ['R3000', ['R3001', 'R1000']],
    ['R3001', ['R3000']],
  ]),
};

describe('tree facts on a hand-built tree', () => {
  it('counts rooms, dead ends, path and search lengths', () => {
    expect(inspectTree(small)).toEqual({
      depth: 1,
      rooms: 5,
      deadEnds: 2,
      shortestPathMoves: 2,
      fullDfsMoves: 8,
      exitDoorAtFirstFork: 1,
      exitDoorPositions: [1],
      // R1000→R2000→R2001→R2000→R1000→R3000→R3001
      orderedDfsMovesToExit: 6,
      start: 'R1000',
      exit: 'R3001',
    });
    expect(exitDoorPositions(small)).toEqual([1]);
    expect(orderedDfsMovesToExit(small)).toBe(6);
  });

  it('answers layout questions', () => {
    expect(wayBack(small, 'R2001')).toBe('R2000');
    expect(wayBack(small, 'R1000')).toBeNull();
    expect(onwardDoors(small, 'R3000')).toEqual(['R3001']);
    expect(onwardDoors(small, 'R1000')).toEqual(['R2000', 'R3000']);
    expect(pathFromStart(small, 'R3001')).toEqual(['R1000', 'R3000', 'R3001']);
    expect(pathFromStart(small, 'R9999')).toBeNull();
    expect(firstForkBranch(small, 'R2001')).toBe('R2000');
    expect(firstForkBranch(small, 'R1000')).toBeNull();
  });

  it('tells which branch holds the exit, both directions, and null for rooms that are not adjacent', () => {
    expect(branchHoldsExit(small, { junction: 'R1000', entry: 'R3000' })).toBe(true);
    expect(branchHoldsExit(small, { junction: 'R1000', entry: 'R2000' })).toBe(false);
    expect(branchHoldsExit(small, { junction: 'R2000', entry: 'R1000' })).toBe(true);
    expect(branchHoldsExit(small, { junction: 'R3000', entry: 'R1000' })).toBe(false);
    expect(branchHoldsExit(small, { junction: 'R1000', entry: 'R2001' })).toBeNull();
    expect(branchRooms(small, { junction: 'R1000', entry: 'R2000' })).toEqual(['R2000', 'R2001']);
    expect(branchRooms(small, { junction: 'R3000', entry: 'R1000' })).toEqual(['R1000', 'R2000', 'R2001']);
    expect(branchRooms(small, { junction: 'R1000', entry: 'R3001' })).toBeNull();
  });
});

describe('tree JSON', () => {
  const tree = generateTree({ depth: 2, rng: createRng('json') });
  const json = (): Record<string, unknown> => JSON.parse(JSON.stringify(treeToJson(tree))) as Record<string, unknown>;

  it('round-trips, keeping every door order', () => {
    const back = treeFromJson(json(), 'test');
    expect([...back.doors]).toEqual([...tree.doors]);
    expect(back.exit).toBe(tree.exit);
  });

  it('refuses a one-way passage', () => {
    const oneWay = json();
    const doors = oneWay.doors as Record<string, string[]>;
    const entry = (tree.doors.get(tree.start) ?? [])[0];
    doors[entry] = doors[entry].filter((door) => door !== tree.start);
    expect(() => treeFromJson(oneWay, 'split.jsonl:7')).toThrow(/split\.jsonl:7: the tree passage .* has no way back/);
  });

  it('refuses an exit that is not a dead end', () => {
    expect(() => treeFromJson({ ...json(), exit: tree.start }, 'split.jsonl:7')).toThrow(
      /split\.jsonl:7: the tree exit .* is not a dead end/,
    );
  });

  it('refuses an extra passage that closes a loop', () => {
    const looped = json();
    const doors = looped.doors as Record<string, string[]>;
    const [a, , c] = exitPath(tree).slice(3, 6);
    doors[a] = [...doors[a], c];
    doors[c] = [...doors[c], a];
    expect(() => treeFromJson(looped, 'x')).toThrow(/has 121 passages, expected 120/);
  });

  it('refuses an extra room with a malformed label and a missing field', () => {
    const extra = json();
    (extra.doors as Record<string, string[]>).r12 = [];
    expect(() => treeFromJson(extra, 'x')).toThrow(/has 122 rooms, expected 121/);
    const { exit: _exit, ...noExit } = json();
    expect(() => treeFromJson(noExit, 'x')).toThrow(/"start" and "exit" must be room labels/);
  });
});
