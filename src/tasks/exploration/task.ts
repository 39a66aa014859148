// The decentralized exploration task (Section 4.2): agents search their own copies of a tree of rooms
// for the exit; the first move into the exit solves it for the team. Depth-3 trees serve RL and
// evaluation; depth-2 trees serve the SFT demonstrations (Table 3).

import { loadExplorationSplit } from '../splits.js';
import type { Task, TaskDefaults } from '../task.js';
import { explorerScript } from './demonstrator.js';
import { createExplorationEpisode } from './episode.js';
import type { ExplorationProblem } from './problem.js';

const EXPLORATION_DEFAULTS: TaskDefaults = {
  // Table 4: per-agent allowance 8,192 (+1 final token, unused: the task takes no final answer); context 32,768 (Qwen3-1.7B).
  workAllowance: 8192,
  finalAllowance: 1,
  contextLimit: 32_768,
  // Appendix M: temperature 0.7 for exploration.
  evaluationTemperature: 0.7,
};

const EXPLORERS = {
  script: explorerScript,
  description: 'scripted explorers of Appendix L: depth-first search with branch claims and exhausted reports',
};

/** Exploration on depth-2 trees (the SFT demonstrations of Appendix L). */
export const explorationDemonstrationTask: Task<ExplorationProblem> = {
  name: 'exploration-d2',
  title: 'Decentralized exploration (depth 2)',
  family: 'exploration',
  defaults: EXPLORATION_DEFAULTS,
  demonstrator: EXPLORERS,
  loadProblems: (options) => loadExplorationSplit({ ...options, dataset: 'exploration-d2' }),
  createEpisode: (options) => createExplorationEpisode(options),
};

/** Exploration on depth-3 trees (RL and evaluation); its SFT demonstrations run on depth-2 trees (Appendix L). */
export const explorationTask: Task<ExplorationProblem> = {
  name: 'exploration',
  title: 'Decentralized exploration',
  family: 'exploration',
  defaults: EXPLORATION_DEFAULTS,
  demonstrator: { ...EXPLORERS, demonstrationTask: explorationDemonstrationTask },
  loadProblems: (options) => loadExplorationSplit({ ...options, dataset: 'exploration-d3' }),
  createEpisode: (options) => createExplorationEpisode(options),
};
