// Exploration problems: one search tree each, with the depth of the split it belongs to (depth 2 for
// SFT demonstrations, depth 3 for RL and evaluation; Table 3).

import { FormatError } from '../../errors.js';
import type { TaskProblem } from '../task.js';
import { roomsInPreorder, wayBack } from './tree-index.js';
import { treeFromJson, treeToJson, type ExplorationTreeJson } from './tree-json.js';
import type { ExplorationTree } from './tree.js';

/** One exploration problem: a search tree. */
export interface ExplorationProblem extends TaskProblem {
  /** The tree every agent explores in its own copy. */
  readonly tree: ExplorationTree;
}

/** The JSON form of a problem, one line of a split file. */
export interface ExplorationProblemJson {
  readonly id: string;
  readonly tree: ExplorationTreeJson;
}

/** The JSON form of a problem. */
export function explorationProblemToJson(problem: ExplorationProblem): ExplorationProblemJson {
  return { id: problem.id, tree: treeToJson(problem.tree) };
}

/** Reads a problem from parsed JSON; throws FormatError naming `where` when it is malformed. */
export function explorationProblemFromJson(value: unknown, where: string): ExplorationProblem {
  const record = value as { id?: unknown; tree?: unknown } | null;
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new FormatError(`${where}: expected an object {"id": ..., "tree": {...}}.`);
  }
  if (typeof record.id !== 'string' || record.id === '') throw new FormatError(`${where}: "id" must be a non-empty string.`);
  return { id: record.id, tree: treeFromJson(record.tree, where) };
}

/**
 * Key for keeping splits disjoint: trees of one shape differ only in door orders and exit (labels carry
 * no information), so two trees are the same problem when, walking in preorder, every room lists its
 * way back at the same position and the exit is at the same preorder position.
 */
export function explorationProblemKey(problem: ExplorationProblem): string {
  const tree = problem.tree;
  const rooms = roomsInPreorder(tree);
  const backPositions = rooms.map((room) => {
    const back = wayBack(tree, room);
    return back === null ? '-' : String((tree.doors.get(room) ?? []).indexOf(back));
  });
  return `${tree.depth}/${tree.branching}/${tree.corridorLength}:${backPositions.join('')}:${rooms.indexOf(tree.exit)}`;
}
