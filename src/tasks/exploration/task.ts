// The decentralized exploration task (Section 4.2): agents search their own copies of a tree of rooms
// for the exit; the first move into the exit solves it for the team. Depth-3 trees serve RL and
// evaluation; depth-2 trees serve the SFT demonstrations (Table 3).

import { loadExplorationSplit } from '../splits.js';
import type { Task } from '../task.js';
import { createExplorationEpisode } from './episode.js';
import type { ExplorationProblem } from './problem.js';

/** Exploration on depth-3 trees (RL and evaluation). */
export const explorationTask: Task<ExplorationProblem> = {
  name: 'exploration',
  loadProblems: (options) => loadExplorationSplit({ ...options, dataset: 'exploration-d3' }),
  createEpisode: (options) => createExplorationEpisode(options),
};

/** Exploration on depth-2 trees (the SFT demonstrations of Appendix L). */
export const explorationDemonstrationTask: Task<ExplorationProblem> = {
  name: 'exploration-d2',
  loadProblems: (options) => loadExplorationSplit({ ...options, dataset: 'exploration-d2' }),
  createEpisode: (options) => createExplorationEpisode(options),
};
