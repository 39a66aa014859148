// The roster of one episode: agent names, each agent's teammates in its own shuffled order, and the
// prompt line that introduces an agent to its team. Shared by every task.

import { ConfigError } from '../errors.js';
import type { Rng } from '../common/random.js';

/** The agents of one episode and who sees whom as a teammate. */
export interface Roster {
  /** N, the number of agents. */
  readonly agentCount: number;
  /** The agent names, by index. */
  readonly agentNames: readonly string[];
  /** Whether messaging is on in this episode. */
  readonly communication: boolean;
  /** Agent agentIndex's teammates in its own shuffled order (empty without messaging). */
  teammates(agentIndex: number): readonly string[];
  /** The prompt part naming the agent and, with messaging, its teammates (wording ours: the paper gives none). */
  introduction(agentIndex: number): string;
  /** Throws ConfigError unless agentIndex names an agent of this episode. */
  checkAgent(agentIndex: number): void;
}

/** What a roster is built from. */
export interface CreateRosterOptions {
  /** The names of the N agents. */
  readonly agentNames: readonly string[];
  /** Whether messaging is on; without it no agent is shown teammates. */
  readonly communication: boolean;
  /** Stream for the teammate shuffles; agent i uses fork("teammates/i"). */
  readonly rng: Rng;
}

/** Validates the names and shuffles each agent's teammate list once. */
export function createRoster(options: CreateRosterOptions): Roster {
  const { agentNames, communication, rng } = options;
  if (agentNames.length < 1) throw new ConfigError('createEpisode: agentNames must name at least one agent.');
  const seen = new Set<string>();
  for (const name of agentNames) {
    if (typeof name !== 'string' || name.trim() === '' || /\s/.test(name)) {
      throw new ConfigError(`createEpisode: agent name ${JSON.stringify(name)} must be a non-empty word without spaces.`);
    }
    if (seen.has(name)) throw new ConfigError(`createEpisode: agent name "${name}" appears twice in agentNames.`);
    seen.add(name);
  }
  const names = agentNames.slice();
  const teammateLists = names.map((name, index) =>
    communication ? rng.fork(`teammates/${index}`).shuffle(names.filter((other) => other !== name)) : [],
  );
  const checkAgent = (agentIndex: number): void => {
    if (!Number.isInteger(agentIndex) || agentIndex < 0 || agentIndex >= names.length) {
      throw new ConfigError(`No agent with index ${String(agentIndex)}: this episode has agents 0..${names.length - 1}.`);
    }
  };
  const teammates = (agentIndex: number): readonly string[] => {
    checkAgent(agentIndex);
    return teammateLists[agentIndex];
  };
  const introduction = (agentIndex: number): string => {
    checkAgent(agentIndex);
    const own = `Your name is ${names[agentIndex]}.`;
    if (!communication) return own;
    const list = teammates(agentIndex);
    if (list.length === 0) return `${own} You have no teammates in this episode.`;
    return `${own} Your teammates are: ${list.join(', ')}.`;
  };
  return { agentCount: names.length, agentNames: names, communication, teammates, introduction, checkAgent };
}
