// How much a team messaged (Appendix M): message calls (a broadcast counts once), deliveries (a
// broadcast counts once per recipient), and how unequally agents sent: the Gini coefficient of each
// agent's outgoing deliveries ("outgoing-delivery concentration"; with broadcasts only it equals the
// Gini of message calls).

import type { EpisodeTrace } from '../../harness/trace.js';

/** Message totals of one episode. */
export interface MessageCounts {
  /** Message tool calls that were delivered (each `message` event once). */
  readonly calls: number;
  /** Deliveries: the recipients of every message added up. */
  readonly deliveries: number;
  /** Outgoing deliveries per agent, in episode order (episode_start.agentNames). */
  readonly deliveriesBySender: readonly number[];
}

/** Counts the calls and deliveries of an episode's `message` events. */
export function messageCountsOf(episode: EpisodeTrace): MessageCounts {
  const index = new Map(episode.start.agentNames.map((name, position) => [name, position]));
  const deliveriesBySender = episode.start.agentNames.map(() => 0);
  let calls = 0;
  let deliveries = 0;
  for (const event of episode.events) {
    if (event.type !== 'message') continue;
    calls += 1;
    deliveries += event.recipients.length;
    const sender = index.get(event.agent);
    if (sender !== undefined) deliveriesBySender[sender] += event.recipients.length;
  }
  return { calls, deliveries, deliveriesBySender };
}

/**
 * The Gini coefficient Σ_i Σ_j |x_i − x_j| / (2 n Σ x) of non-negative amounts: 0 when all are equal,
 * (n − 1)/n when one holds everything; null when there are fewer than two amounts or they sum to 0.
 */
export function gini(amounts: readonly number[]): number | null {
  const total = amounts.reduce((sum, amount) => sum + amount, 0);
  if (amounts.length < 2 || total === 0) return null;
  let differences = 0;
  for (const x of amounts) for (const y of amounts) differences += Math.abs(x - y);
  return differences / (2 * amounts.length * total);
}
