// Search trees of decentralized exploration, generated exactly as Appendix H describes: level by
// level, b doors from each junction lead into corridors of c rooms, the last room of a corridor is the
// next junction, after d levels the corridor ends are dead ends, and one dead end, chosen uniformly,
// is the exit. Labels are random fixed-width numbers ("R4821"), unique within a tree. Each room's door
// order is shuffled once here and is then the same for every agent and every visit.
//
// Draw order (fixed, so a seed always gives the same tree): labels come from rng.fork("labels") in
// creation order (start room, then level by level, junction by junction, door by door, corridor room
// by corridor room); the exit from rng.fork("exit"); door orders from rng.fork("doors"), room by room
// in creation order, each shuffling [way back, onward doors in creation order].

import { ConfigError } from '../../errors.js';
import type { Rng } from '../../common/random.js';

/** Doors from each junction into the next level (Table 3: b = 3). */
export const TREE_BRANCHING = 3;
/** Rooms per corridor, the last being the next junction or a dead end (Table 3: c = 10). */
export const TREE_CORRIDOR_LENGTH = 10;
/** The smallest label width (Appendix H examples: "R4821"). */
export const MIN_LABEL_DIGITS = 4;
/** Labels are drawn from a space at least this many times the room count, so redraws stay rare. */
const LABEL_SPACE_FACTOR = 8;

/** A search tree: its shape, start, exit and every room's doors in their fixed listed order. */
export interface ExplorationTree {
  /** d, the number of junction levels below the start. */
  readonly depth: number;
  /** b, the onward doors of every junction (the start room's doors). */
  readonly branching: number;
  /** c, the rooms of every corridor. */
  readonly corridorLength: number;
  /** The room every agent starts in (the first junction). */
  readonly start: string;
  /** The dead end that is the exit. */
  readonly exit: string;
  /** Every room's doors in listed order; iteration order is creation order, start first. */
  readonly doors: ReadonlyMap<string, readonly string[]>;
}

/** The shape parameters of a tree. */
export interface TreeShape {
  /** d, the number of junction levels. */
  readonly depth: number;
  /** b, doors per junction (default 3, Table 3). */
  readonly branching?: number;
  /** c, rooms per corridor (default 10, Table 3). */
  readonly corridorLength?: number;
}

/** Options of generateTree. */
export interface GenerateTreeOptions extends TreeShape {
  /** The stream the tree is drawn from. */
  readonly rng: Rng;
}

function resolveShape(shape: TreeShape): Required<TreeShape> {
  const resolved = {
    depth: shape.depth,
    branching: shape.branching ?? TREE_BRANCHING,
    corridorLength: shape.corridorLength ?? TREE_CORRIDOR_LENGTH,
  };
  for (const [field, min] of [['depth', 1], ['branching', 1], ['corridorLength', 1]] as const) {
    const value = resolved[field];
    if (!Number.isInteger(value) || value < min) {
      throw new ConfigError(`Exploration tree: ${field} must be an integer >= ${min}, got ${String(value)}.`);
    }
  }
  if (treeRoomCount(resolved) > 1_000_000) {
    throw new ConfigError(`Exploration tree: depth ${resolved.depth} with branching ${resolved.branching} exceeds a million rooms.`);
  }
  return resolved;
}

/** Rooms of a tree: 1 + c·(b + b² + … + b^d); 121 for d = 2 and 391 for d = 3 (Table 3). */
export function treeRoomCount(shape: TreeShape): number {
  const branching = shape.branching ?? TREE_BRANCHING;
  const corridorLength = shape.corridorLength ?? TREE_CORRIDOR_LENGTH;
  let corridors = 0;
  let levelCorridors = 1;
  for (let level = 1; level <= shape.depth; level += 1) {
    levelCorridors *= branching;
    corridors += levelCorridors;
  }
  return 1 + corridors * corridorLength;
}

/** Label width for a room count: the smallest width >= 4 whose label space is at least 8× the rooms. */
export function labelDigits(roomCount: number): number {
  let digits = MIN_LABEL_DIGITS;
  while (9 * 10 ** (digits - 1) < LABEL_SPACE_FACTOR * roomCount) digits += 1;
  return digits;
}

/** Generates a tree per Appendix H (see the file header for the exact draw order). */
export function generateTree(options: GenerateTreeOptions): ExplorationTree {
  const shape = resolveShape(options);
  const digits = labelDigits(treeRoomCount(shape));
  const lowest = 10 ** (digits - 1);
  const labelRng = options.rng.fork('labels');
  const adjacency = new Map<string, string[]>();
  const newRoom = (): string => {
    let label = `R${lowest + labelRng.nextInt(9 * lowest)}`;
    while (adjacency.has(label)) label = `R${lowest + labelRng.nextInt(9 * lowest)}`;
    adjacency.set(label, []);
    return label;
  };
  const link = (from: string, to: string): void => {
    adjacency.get(from)?.push(to);
    adjacency.get(to)?.push(from);
  };

  const start = newRoom();
  let junctions = [start];
  for (let level = 1; level <= shape.depth; level += 1) {
    const next: string[] = [];
    for (const junction of junctions) {
      for (let door = 0; door < shape.branching; door += 1) {
        let previous = junction;
        for (let step = 0; step < shape.corridorLength; step += 1) {
          const room = newRoom();
          link(previous, room);
          previous = room;
        }
        next.push(previous);
      }
    }
    junctions = next;
  }
  const exit = junctions[options.rng.fork('exit').nextInt(junctions.length)];
  const doorRng = options.rng.fork('doors');
  const doors = new Map<string, readonly string[]>();
  for (const [room, neighbours] of adjacency) doors.set(room, doorRng.shuffle(neighbours));
  return { ...shape, start, exit, doors };
}
