// The directed message graph of one episode (Appendix M): an edge i → j when i sent at least one
// message that reached j, a broadcast adding an edge to every teammate, with the number of messages
// from i that reached j. Its measures: centralization Σ_j (k* − k_j)/(N − 1)² over in-degrees k_j,
// reciprocity, the fraction of edges whose reverse edge exists, and weighted reciprocity
// Σ_{i≠j} min(w_ij, w_ji) / Σ w_ij over the delivery counts w (Squartini et al. 2013: the share of
// deliveries answered in kind). All are undefined (null) for an episode with no edge (no message was
// delivered, or N = 1); seed means skip undefined episodes.

import type { EpisodeTrace } from '../../harness/trace.js';
import type { MessageGraphEdge } from '../report/message-graph.js';

/** The message graph of one episode: every agent (as named in the episode) and the delivered edges. */
export interface EpisodeMessageGraph {
  /** The agents in episode order (episode_start.agentNames). */
  readonly agents: readonly string[];
  /** One edge per ordered pair that carried at least one message, in order of first delivery. */
  readonly edges: readonly MessageGraphEdge[];
}

/** Builds the message graph of an episode from its `message` events (sender → each recipient). */
export function messageGraphOf(episode: EpisodeTrace): EpisodeMessageGraph {
  const counts = new Map<string, { from: string; to: string; count: number }>();
  for (const event of episode.events) {
    if (event.type !== 'message') continue;
    for (const recipient of event.recipients) {
      const key = JSON.stringify([event.agent, recipient]);
      const edge = counts.get(key);
      if (edge === undefined) counts.set(key, { from: event.agent, to: recipient, count: 1 });
      else edge.count += 1;
    }
  }
  return { agents: episode.start.agentNames, edges: [...counts.values()] };
}

/** Σ_j (k* − k_j)/(N − 1)², k_j the in-degree of agent j and k* the largest; null without edges or below two agents. */
export function centralization(graph: EpisodeMessageGraph): number | null {
  const n = graph.agents.length;
  if (n < 2 || graph.edges.length === 0) return null;
  const inDegree = new Map<string, number>(graph.agents.map((agent) => [agent, 0]));
  for (const edge of graph.edges) inDegree.set(edge.to, (inDegree.get(edge.to) ?? 0) + 1);
  const degrees = [...inDegree.values()];
  const largest = Math.max(...degrees);
  return degrees.reduce((total, degree) => total + (largest - degree), 0) / (n - 1) ** 2;
}

/** The fraction of edges i → j for which j → i is also an edge; null without edges. */
export function reciprocity(graph: EpisodeMessageGraph): number | null {
  if (graph.edges.length === 0) return null;
  const present = new Set(graph.edges.map((edge) => JSON.stringify([edge.from, edge.to])));
  const reciprocated = graph.edges.filter((edge) => present.has(JSON.stringify([edge.to, edge.from]))).length;
  return reciprocated / graph.edges.length;
}

/** Σ_{i≠j} min(w_ij, w_ji) / Σ_{i≠j} w_ij, w_ij the messages from i that reached j; null without edges. */
export function weightedReciprocity(graph: EpisodeMessageGraph): number | null {
  if (graph.edges.length === 0) return null;
  const weight = new Map(graph.edges.map((edge) => [JSON.stringify([edge.from, edge.to]), edge.count]));
  const total = graph.edges.reduce((sum, edge) => sum + edge.count, 0);
  const mutual = graph.edges.reduce((sum, edge) => sum + Math.min(edge.count, weight.get(JSON.stringify([edge.to, edge.from])) ?? 0), 0);
  return mutual / total;
}
