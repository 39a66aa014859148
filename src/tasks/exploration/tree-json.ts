// Trees as JSON (for split files) and the structural check that refuses any tree that is not the
// shape Appendix H generates: labels of one width, passages both ways, the right degree at every
// distance from the start, the right room count, and the exit at a dead end.

import { FormatError } from '../../errors.js';
import { labelDigits, treeRoomCount, type ExplorationTree } from './tree.js';

/** The JSON form of a tree; `doors` maps every room to its doors in listed order. */
export interface ExplorationTreeJson {
  readonly depth: number;
  readonly branching: number;
  readonly corridorLength: number;
  readonly start: string;
  readonly exit: string;
  readonly doors: Readonly<Record<string, readonly string[]>>;
}

/** The JSON form of a tree (room order kept: creation order, start first). */
export function treeToJson(tree: ExplorationTree): ExplorationTreeJson {
  return {
    depth: tree.depth,
    branching: tree.branching,
    corridorLength: tree.corridorLength,
    start: tree.start,
    exit: tree.exit,
    doors: Object.fromEntries(tree.doors),
  };
}

/** Why a tree is not a valid Appendix H tree, or null when it is. */
export function treeShapeProblem(tree: ExplorationTree): string | null {
  const { depth, branching, corridorLength } = tree;
  const expectedRooms = treeRoomCount(tree);
  if (tree.doors.size !== expectedRooms) return `has ${tree.doors.size} rooms, expected ${expectedRooms}`;
  const labelPattern = new RegExp(`^R[1-9][0-9]{${labelDigits(expectedRooms) - 1}}$`);
  for (const [room, doors] of tree.doors) {
    if (!labelPattern.test(room)) return `room label ${JSON.stringify(room)} is not R followed by ${labelDigits(expectedRooms)} digits`;
    if (new Set(doors).size !== doors.length) return `room ${room} lists a door twice`;
    for (const door of doors) {
      if (!(tree.doors.get(door) ?? []).includes(room)) return `passage ${room} -> ${door} has no way back`;
    }
  }
  if (!tree.doors.has(tree.start)) return `start ${JSON.stringify(tree.start)} is not a room`;
  let doorCount = 0;
  for (const doors of tree.doors.values()) doorCount += doors.length;
  // A connected graph with one passage fewer than rooms is a tree, so the distances below are tree depths.
  if (doorCount !== 2 * (expectedRooms - 1)) return `has ${doorCount / 2} passages, expected ${expectedRooms - 1}`;
  // Breadth-first from the start: check each room's degree against its distance and that no room repeats.
  const distance = new Map<string, number>([[tree.start, 0]]);
  const queue = [tree.start];
  for (let head = 0; head < queue.length; head += 1) {
    const room = queue[head];
    const d = distance.get(room) as number;
    const doors = tree.doors.get(room) as readonly string[];
    const expectedDoors = d === 0 ? branching : d === depth * corridorLength ? 1 : d % corridorLength === 0 ? branching + 1 : 2;
    if (doors.length !== expectedDoors) return `room ${room} at distance ${d} has ${doors.length} doors, expected ${expectedDoors}`;
    for (const door of doors) {
      const seen = distance.get(door);
      if (seen === undefined) {
        distance.set(door, d + 1);
        queue.push(door);
      } else if (seen !== d - 1) {
        return `passage ${room} -> ${door} closes a loop`;
      }
    }
  }
  if (distance.size !== expectedRooms) return `only ${distance.size} of ${expectedRooms} rooms are reachable from the start`;
  if (distance.get(tree.exit) !== depth * corridorLength) return `exit ${JSON.stringify(tree.exit)} is not a dead end`;
  return null;
}

/** Reads a tree from parsed JSON; throws FormatError naming `where` when it is malformed or misshapen. */
export function treeFromJson(value: unknown, where: string): ExplorationTree {
  const record = value as Partial<Record<keyof ExplorationTreeJson, unknown>> | null;
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new FormatError(`${where}: expected a tree object {"depth", "branching", "corridorLength", "start", "exit", "doors"}.`);
  }
  for (const field of ['depth', 'branching', 'corridorLength'] as const) {
    const n = record[field];
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 12) {
      throw new FormatError(`${where}: tree "${field}" must be an integer in 1..12, got ${JSON.stringify(n)}.`);
    }
  }
  if (typeof record.start !== 'string' || typeof record.exit !== 'string') {
    throw new FormatError(`${where}: tree "start" and "exit" must be room labels.`);
  }
  const doorsJson = record.doors;
  if (typeof doorsJson !== 'object' || doorsJson === null || Array.isArray(doorsJson)) {
    throw new FormatError(`${where}: tree "doors" must be an object mapping each room to its doors.`);
  }
  const doors = new Map<string, readonly string[]>();
  for (const [room, list] of Object.entries(doorsJson)) {
    if (!Array.isArray(list) || !list.every((door) => typeof door === 'string')) {
      throw new FormatError(`${where}: doors of room ${JSON.stringify(room)} must be an array of room labels.`);
    }
    doors.set(room, list as string[]);
  }
  const tree: ExplorationTree = {
    depth: record.depth as number,
    branching: record.branching as number,
    corridorLength: record.corridorLength as number,
    start: record.start,
    exit: record.exit,
    doors,
  };
  const problem = treeShapeProblem(tree);
  if (problem !== null) throw new FormatError(`${where}: the tree ${problem}.`);
  return tree;
}
