// Questions about a tree's layout that demonstrators and analyses ask: which way leads back toward
// the start, which doors lead onward (in listed order), which first-fork branch a room lies in, which
// rooms a branch holds and whether it holds the exit (for "false exhausted" reports). A branch is
// named as the paper's messages name it, by a junction and the room one door beyond it ("the branch
// from R1203 through R4410"). Indexes are built once per tree and cached.

import type { ExplorationTree } from './tree.js';

/** A branch: the rooms reached from `junction` by walking through its door to `entry`. */
export interface BranchRef {
  /** The room the branch starts from (usually a junction). */
  readonly junction: string;
  /** The adjacent room one door beyond it. */
  readonly entry: string;
}

interface TreeIndex {
  /** Room → the door toward the start (null for the start). */
  readonly parent: ReadonlyMap<string, string | null>;
  /** Room → doors away from the start, in listed order. */
  readonly onward: ReadonlyMap<string, readonly string[]>;
  /** Room → preorder position; with `last`, subtree membership in O(1). */
  readonly order: ReadonlyMap<string, number>;
  /** Room → the largest preorder position in its subtree. */
  readonly last: ReadonlyMap<string, number>;
  /** Rooms in preorder (start first, onward doors in listed order). */
  readonly preorder: readonly string[];
}

const cache = new WeakMap<ExplorationTree, TreeIndex>();

function buildIndex(tree: ExplorationTree): TreeIndex {
  const parent = new Map<string, string | null>([[tree.start, null]]);
  const onward = new Map<string, readonly string[]>();
  const order = new Map<string, number>();
  const last = new Map<string, number>();
  const preorder: string[] = [];
  // Iterative preorder walk; a room's subtree ends where the walk next leaves it.
  const stack: Array<{ room: string; exiting: boolean }> = [{ room: tree.start, exiting: false }];
  while (stack.length > 0) {
    const { room, exiting } = stack.pop() as { room: string; exiting: boolean };
    if (exiting) {
      last.set(room, preorder.length - 1);
      continue;
    }
    order.set(room, preorder.length);
    preorder.push(room);
    const back = parent.get(room) ?? null;
    const children = (tree.doors.get(room) ?? []).filter((door) => door !== back);
    onward.set(room, children);
    stack.push({ room, exiting: true });
    for (let i = children.length - 1; i >= 0; i -= 1) {
      parent.set(children[i], room);
      stack.push({ room: children[i], exiting: false });
    }
  }
  return { parent, onward, order, last, preorder };
}

function indexOf(tree: ExplorationTree): TreeIndex {
  let index = cache.get(tree);
  if (index === undefined) {
    index = buildIndex(tree);
    cache.set(tree, index);
  }
  return index;
}

/** Whether `room` is `root` or lies beyond it (away from the start). */
function inSubtree(index: TreeIndex, root: string, room: string): boolean {
  const position = index.order.get(room);
  const rootPosition = index.order.get(root);
  const rootLast = index.last.get(root);
  return position !== undefined && rootPosition !== undefined && rootLast !== undefined && position >= rootPosition && position <= rootLast;
}

/** The door of `room` that leads back toward the start; null for the start or an unknown room. */
export function wayBack(tree: ExplorationTree, room: string): string | null {
  return indexOf(tree).parent.get(room) ?? null;
}

/** The doors of `room` leading away from the start, in listed order; empty for dead ends and unknown rooms. */
export function onwardDoors(tree: ExplorationTree, room: string): readonly string[] {
  return indexOf(tree).onward.get(room) ?? [];
}

/** Whether `room` is the start or a junction (a room with more than one onward door). */
export function isFork(tree: ExplorationTree, room: string): boolean {
  return onwardDoors(tree, room).length > 1 || room === tree.start;
}

/** Every room in preorder: start first, each room's onward doors in listed order. */
export function roomsInPreorder(tree: ExplorationTree): readonly string[] {
  return indexOf(tree).preorder;
}

/** The rooms from the start to `room`, both included; null for an unknown room. */
export function pathFromStart(tree: ExplorationTree, room: string): readonly string[] | null {
  const index = indexOf(tree);
  if (!index.order.has(room)) return null;
  const path: string[] = [];
  for (let current: string | null = room; current !== null; current = index.parent.get(current) ?? null) path.push(current);
  return path.reverse();
}

/** The rooms from the start to the exit (shortestPathMoves + 1 rooms). */
export function exitPath(tree: ExplorationTree): readonly string[] {
  return pathFromStart(tree, tree.exit) ?? [];
}

/** The start-room door whose branch holds `room`; null for the start room and unknown rooms. */
export function firstForkBranch(tree: ExplorationTree, room: string): string | null {
  const path = pathFromStart(tree, room);
  return path !== null && path.length > 1 ? path[1] : null;
}

/** The rooms of a branch, in preorder; null when junction and entry are not adjacent rooms of this tree. */
export function branchRooms(tree: ExplorationTree, branch: BranchRef): readonly string[] | null {
  const index = indexOf(tree);
  if (index.parent.get(branch.entry) === branch.junction) {
    return index.preorder.slice(index.order.get(branch.entry) as number, (index.last.get(branch.entry) as number) + 1);
  }
  if (index.parent.get(branch.junction) === branch.entry) {
    // Walking back toward the start: everything outside the junction's own subtree.
    return index.preorder.filter((room) => !inSubtree(index, branch.junction, room));
  }
  return null;
}

/** Whether a branch holds the exit; null when junction and entry are not adjacent rooms of this tree. */
export function branchHoldsExit(tree: ExplorationTree, branch: BranchRef): boolean | null {
  const index = indexOf(tree);
  if (index.parent.get(branch.entry) === branch.junction) return inSubtree(index, branch.entry, tree.exit);
  if (index.parent.get(branch.junction) === branch.entry) return !inSubtree(index, branch.junction, tree.exit);
  return null;
}
