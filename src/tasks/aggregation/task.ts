// The information aggregation task (Section 4.2): each agent holds one private number in 1..99 and the
// team must return all N numbers in ascending order, duplicates kept. `aggregation-digits` (ours, the
// CPU mini's task) is the same task with numbers 1..9, from its own splits.

import { loadAggregationSplit } from '../splits.js';
import type { Task, TaskDefaults, TaskDemonstrator } from '../task.js';
import { aggregatorScript } from './demonstrator.js';
import { createAggregationEpisode } from './episode.js';
import type { AggregationProblem } from './problem.js';

const AGGREGATION_DEFAULTS: TaskDefaults = {
  // Table 4: per-agent allowance 8,192 work + 1,024 final tokens; context length 40,960 (Qwen3-0.6B).
  workAllowance: 8192,
  finalAllowance: 1024,
  contextLimit: 40_960,
  // Appendix M: temperature 1.0 for aggregation.
  evaluationTemperature: 1.0,
};

const AGGREGATION_DEMONSTRATOR: TaskDemonstrator = {
  script: aggregatorScript,
  description: 'scripted aggregation agents: broadcast their own number once, answer when every teammate is heard',
};

/** The aggregation task. */
export const aggregationTask: Task<AggregationProblem> = {
  name: 'aggregation',
  title: 'Information aggregation',
  family: 'aggregation',
  defaults: AGGREGATION_DEFAULTS,
  demonstrator: AGGREGATION_DEMONSTRATOR,
  loadProblems: (options) => loadAggregationSplit(options),
  createEpisode: (options) => createAggregationEpisode(options),
};

/** Aggregation with single-digit private numbers (1..9): the same episodes, prompts, grading and defaults. */
export const aggregationDigitsTask: Task<AggregationProblem> = {
  name: 'aggregation-digits',
  title: 'Information aggregation (numbers 1–9)',
  family: 'aggregation',
  defaults: AGGREGATION_DEFAULTS,
  demonstrator: AGGREGATION_DEMONSTRATOR,
  loadProblems: (options) => loadAggregationSplit({ ...options, dataset: 'aggregation-digits' }),
  createEpisode: (options) => createAggregationEpisode(options),
};
