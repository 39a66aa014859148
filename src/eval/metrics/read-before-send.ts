// Reading before sending (Appendix K.2): among the agents of an episode that sent at least one
// message, the share whose first read of at least one message (a `read` event returning messages)
// came before their first send. Undefined (null) when no agent sent.

import type { EpisodeTrace } from '../../harness/trace.js';

/** Share of sending agents that read a message before their first send; null when nobody sent. */
export function readBeforeFirstSendShareOf(episode: EpisodeTrace): number | null {
  const firstRead = new Map<string, number>();
  const firstSend = new Map<string, number>();
  episode.events.forEach((event, position) => {
    if (event.type === 'read' && event.messageIds.length > 0 && !firstRead.has(event.agent)) firstRead.set(event.agent, position);
    if (event.type === 'message' && !firstSend.has(event.agent)) firstSend.set(event.agent, position);
  });
  if (firstSend.size === 0) return null;
  let readFirst = 0;
  for (const [agent, sendPosition] of firstSend) {
    const readPosition = firstRead.get(agent);
    if (readPosition !== undefined && readPosition < sendPosition) readFirst += 1;
  }
  return readFirst / firstSend.size;
}
