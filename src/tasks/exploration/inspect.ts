// Tree facts (Table 3 and the analyses of Appendix K.3): room and dead-end counts, the shortest path
// and full depth-first search lengths, the exit door's listed position at each fork on the exit path,
// and the moves a lone depth-first agent taking doors in listed order needs to reach the exit.

import { exitPath, isFork, onwardDoors, roomsInPreorder } from './tree-index.js';
import type { ExplorationTree } from './tree.js';

/** The facts `swarm task inspect exploration` reports. */
export interface TreeFacts {
  /** d. */
  readonly depth: number;
  /** Rooms in the tree (Table 3: 121 at d = 2, 391 at d = 3). */
  readonly rooms: number;
  /** Dead ends, the exit candidates (Table 3: 9, 27). */
  readonly deadEnds: number;
  /** Moves from the start to the exit (Table 3: 20, 30). */
  readonly shortestPathMoves: number;
  /** Moves to visit every room and return to the start, 2 × passages (Table 3: 240, 780). */
  readonly fullDfsMoves: number;
  /**
   * 0-based position, in the start room's listed doors, of the door whose branch holds the exit
   * (Figure 20's "exit's door at the first fork, as listed": 0 = 1st).
   */
  readonly exitDoorAtFirstFork: number;
  /**
   * At each fork on the exit path (start first, d entries), the 0-based position of the door toward the
   * exit among that fork's onward doors in listed order (the way back is not counted).
   */
  readonly exitDoorPositions: readonly number[];
  /** Moves a lone depth-first agent needs to reach the exit, trying onward doors in listed order (Figure 20). */
  readonly orderedDfsMovesToExit: number;
  /** The start room. */
  readonly start: string;
  /** The exit room. */
  readonly exit: string;
}

/** The exit door's position among the onward doors at each fork of the exit path, start first. */
export function exitDoorPositions(tree: ExplorationTree): number[] {
  const path = exitPath(tree);
  const positions: number[] = [];
  for (let i = 0; i + 1 < path.length; i += 1) {
    if (isFork(tree, path[i])) positions.push(onwardDoors(tree, path[i]).indexOf(path[i + 1]));
  }
  return positions;
}

/** Moves of a depth-first search that tries onward doors in listed order, backtracking, until the exit. */
export function orderedDfsMovesToExit(tree: ExplorationTree): number {
  // Preorder follows listed order, so the search has entered every room before the exit and walked
  // back out of each one that is not on the exit path: 2 moves per such room, 1 per exit-path room.
  const preorder = roomsInPreorder(tree);
  const onPath = new Set(exitPath(tree));
  let moves = 0;
  for (const room of preorder.slice(1, preorder.indexOf(tree.exit) + 1)) moves += onPath.has(room) ? 1 : 2;
  return moves;
}

/** Computes every fact of TreeFacts. */
export function inspectTree(tree: ExplorationTree): TreeFacts {
  const rooms = tree.doors.size;
  let deadEnds = 0;
  for (const [room, doors] of tree.doors) if (doors.length === 1 && room !== tree.start) deadEnds += 1;
  const positions = exitDoorPositions(tree);
  return {
    depth: tree.depth,
    rooms,
    deadEnds,
    shortestPathMoves: exitPath(tree).length - 1,
    fullDfsMoves: 2 * (rooms - 1),
    exitDoorAtFirstFork: positions[0],
    exitDoorPositions: positions,
    orderedDfsMovesToExit: orderedDfsMovesToExit(tree),
    start: tree.start,
    exit: tree.exit,
  };
}
