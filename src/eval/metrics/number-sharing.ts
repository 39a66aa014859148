// Whether an aggregation team's private numbers got around (Appendix K.2): the share of agents that
// stated their own number in a message they sent, and the share of (owner, teammate) pairs in which
// the teammate read a message from the owner stating the owner's number ("teammate numbers sent and
// read"). Both are undefined (null) for a team of one, which has nobody to tell.

import type { EpisodeTrace } from '../../harness/trace.js';
import { statedNumbers } from './stated-numbers.js';

/** The two shares of one episode. */
export interface NumberSharing {
  /** Share of agents that sent a message stating their own number; null when N < 2. */
  readonly numbersSentShare: number | null;
  /** Share of ordered (owner, reader) pairs, owner ≠ reader, where the reader read the owner's message stating it; null when N < 2. */
  readonly numbersSentAndReadShare: number | null;
}

/** Options of numberSharingOf. */
export interface NumberSharingOptions {
  /** The episode. */
  readonly episode: EpisodeTrace;
  /** The private numbers of the problem; agent i of the episode holds numbers[i]. */
  readonly numbers: readonly number[];
}

/** Measures how the team's private numbers were sent and read. */
export function numberSharingOf(options: NumberSharingOptions): NumberSharing {
  const names = options.episode.start.agentNames;
  const n = names.length;
  if (n < 2) return { numbersSentShare: null, numbersSentAndReadShare: null };
  const ownNumber = new Map(names.map((name, index) => [name, options.numbers[index]]));
  // Message id → its sender, when the message states the sender's own number.
  const carriesOwnNumber = new Map<number, string>();
  const sentOwn = new Set<string>();
  const readPairs = new Set<string>();
  for (const event of options.episode.events) {
    if (event.type === 'message' && statedNumbers(event.text).has(ownNumber.get(event.agent) ?? Number.NaN)) {
      carriesOwnNumber.set(event.messageId, event.agent);
      sentOwn.add(event.agent);
    }
    if (event.type === 'read') {
      for (const id of event.messageIds) {
        const owner = carriesOwnNumber.get(id);
        if (owner !== undefined && owner !== event.agent) readPairs.add(JSON.stringify([owner, event.agent]));
      }
    }
  }
  return { numbersSentShare: sentOwn.size / n, numbersSentAndReadShare: readPairs.size / (n * (n - 1)) };
}
