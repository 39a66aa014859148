// Reading before sending, two ways.
//   readBeforeSendShareOf — §6 / Fig. 6b and App. K.2: "the share of agents that check their inbox
//     before sending their own number", over every agent of the episode: an agent counts when it called
//     read_messages before its first message stating its own number (aggregation; any first message
//     for other tasks), or read and never sent it ("many eventually never send at all"). An agent that
//     neither read nor sent does not count. Undefined (null) below two agents.
//   readBeforeFirstSendShareOf — among the agents that sent at least one message, the share whose first
//     read returning at least one message came before their first send. Undefined when no agent sent.

import type { EpisodeTrace } from '../../harness/trace.js';
import { statedNumbers } from './stated-numbers.js';

/** Share of the episode's agents that checked their inbox before sending their own number (or read and never sent); null below 2 agents. */
export function readBeforeSendShareOf(episode: EpisodeTrace, ownNumbers?: readonly number[]): number | null {
  const names = episode.start.agentNames;
  if (names.length < 2) return null;
  const own = new Map(names.map((name, index) => [name, ownNumbers?.[index]]));
  const firstRead = new Map<string, number>();
  const firstSend = new Map<string, number>();
  episode.events.forEach((event, position) => {
    if (event.type === 'read' && !firstRead.has(event.agent)) firstRead.set(event.agent, position);
    if (event.type === 'message' && !firstSend.has(event.agent)) {
      const number = own.get(event.agent);
      if (number === undefined || statedNumbers(event.text).has(number)) firstSend.set(event.agent, position);
    }
  });
  const readFirst = names.filter((name) => {
    const read = firstRead.get(name);
    const send = firstSend.get(name);
    return read !== undefined && (send === undefined || read < send);
  });
  return readFirst.length / names.length;
}

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
