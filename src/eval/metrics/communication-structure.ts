// The communication structure class of an aggregation team (Appendix K.1), from who sent which
// messages: at least one agent never sends ("silentAgent"); every agent sends and at least one message
// is direct ("conversation"); every agent only broadcasts and some agent broadcasts more than once
// ("repeatedBroadcasts"); every agent sends exactly one broadcast ("oneBroadcastEach"). The four
// classes partition all episodes; a team of one is "silentAgent" (it has nobody to message).

import type { EpisodeTrace } from '../../harness/trace.js';
import { BROADCAST_RECIPIENT } from '../../tasks/index.js';
import type { StructureClass } from '../summary.js';

/** The structure class of an episode's messaging. */
export function communicationStructureOf(episode: EpisodeTrace): StructureClass {
  const sent = new Map<string, number>(episode.start.agentNames.map((name) => [name, 0]));
  let direct = false;
  for (const event of episode.events) {
    if (event.type !== 'message') continue;
    sent.set(event.agent, (sent.get(event.agent) ?? 0) + 1);
    if (event.to !== BROADCAST_RECIPIENT) direct = true;
  }
  const counts = [...sent.values()];
  if (counts.some((count) => count === 0)) return 'silentAgent';
  if (direct) return 'conversation';
  return counts.some((count) => count > 1) ? 'repeatedBroadcasts' : 'oneBroadcastEach';
}
