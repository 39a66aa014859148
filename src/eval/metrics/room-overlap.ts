// Room overlap of an exploration team (Appendix M): with R_i the rooms agent i visited (its moves'
// destinations plus the shared start), V = Σ_i (|R_i| − 1) counts each agent's distinct rooms apart
// from the start and U = |∪_i R_i| − 1 the team's; overlap = (V − U)/V. It is 0 when no two agents
// visit the same room and approaches 1 when all follow one path; undefined (null) when no agent moved
// (V = 0). The start is the `from` of the episode's first move (every agent starts there).

import type { EpisodeTrace } from '../../harness/trace.js';

/** (V − U)/V over the rooms each agent reached by `move`; null when no agent moved. */
export function roomOverlapOf(episode: EpisodeTrace): number | null {
  let start: string | null = null;
  const visited = new Map<string, Set<string>>();
  for (const event of episode.events) {
    if (event.type !== 'task_event' || event.event.type !== 'move') continue;
    const { from, to } = event.event;
    if (typeof from !== 'string' || typeof to !== 'string') continue;
    start ??= from;
    let rooms = visited.get(event.agent);
    if (rooms === undefined) {
      rooms = new Set();
      visited.set(event.agent, rooms);
    }
    rooms.add(to);
  }
  if (start === null) return null;
  const team = new Set<string>();
  let perAgent = 0;
  for (const rooms of visited.values()) {
    rooms.delete(start);
    perAgent += rooms.size;
    for (const room of rooms) team.add(room);
  }
  return perAgent === 0 ? null : (perAgent - team.size) / perAgent;
}
