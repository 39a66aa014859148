// Hand-built rollouts for the RL tests: agent histories written as alternating context and sampled pieces.
import { AgentSequence, TOKEN_ROLE_CODE } from '../../src/policy/agent-sequence.js';
import type { RolloutEpisode } from '../../src/rl/loss-unit.js';

/** A piece of history: context tokens (role 'prompt') or sampled tokens with their log-probs. */
export type Piece = { context: number[] } | { sampled: number[]; logprobs: number[] };

/** An AgentSequence made of these pieces, in order. */
export function history(name: string, pieces: Piece[]): AgentSequence {
  const sequence = new AgentSequence({ agentIndex: 0, agentName: name, samplingSeed: 1n });
  for (const piece of pieces) {
    if ('context' in piece) {
      sequence.appendContext({ tokens: piece.context, roles: new Uint8Array(piece.context.length).fill(TOKEN_ROLE_CODE.prompt), items: [] });
    } else {
      sequence.appendSampled({ tokens: piece.sampled, logprobs: piece.logprobs, finish: 'stop' });
    }
  }
  return sequence;
}

/** An agent whose history is a 1-token prompt then `generated` sampled tokens (log-prob −1 each). */
export function agentWith(generated: number, succeeded = false): { sequence: AgentSequence; succeeded: boolean } {
  return { sequence: history('a', [{ context: [0] }, { sampled: new Array(generated).fill(7), logprobs: new Array(generated).fill(-1) }]), succeeded };
}

/** An episode of agents with these generated-token counts and own successes. */
export function episode(teamSuccess: boolean, agents: { generated: number; succeeded?: boolean }[]): RolloutEpisode {
  return {
    teamSuccess,
    totalTokens: agents.reduce((sum, agent) => sum + agent.generated, 0),
    agents: agents.map((agent) => agentWith(agent.generated, agent.succeeded ?? false)),
  };
}
