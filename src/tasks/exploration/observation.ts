// What an agent sees in a room (Appendix H): a JSON object with the room, its doors in listed order,
// whether it is the exit and the room the agent arrived from (null in the start room before any
// move), plus a notice at dead ends and at the exit. The notice wording is ours.

import { jsonDumps } from '../../common/json-dumps.js';
import type { ExplorationTree } from './tree.js';

/** Options of observeRoom. */
export interface ObserveRoomOptions {
  /** The tree. */
  readonly tree: ExplorationTree;
  /** The agent's current room. */
  readonly room: string;
  /** The room the agent last arrived from, or null before its first move. */
  readonly arrivedFrom: string | null;
}

/** The observation of a room as the JSON text shown to the model. */
export function observeRoom(options: ObserveRoomOptions): string {
  const { tree, room, arrivedFrom } = options;
  const doors = tree.doors.get(room) ?? [];
  const isExit = room === tree.exit;
  const base = { room, doors, exit: isExit, arrived_from: arrivedFrom };
  if (isExit) return jsonDumps({ ...base, notice: 'This is the exit. The task is solved for the whole team.' });
  if (doors.length === 1 && room !== tree.start) {
    return jsonDumps({ ...base, notice: `Dead end: the only door leads back to ${doors[0]}.` });
  }
  return jsonDumps(base);
}
