// The information aggregation task (Section 4.2): each agent holds one private number in 1..99 and the
// team must return all N numbers in ascending order, duplicates kept.

import { loadAggregationSplit } from '../splits.js';
import type { Task } from '../task.js';
import { createAggregationEpisode } from './episode.js';
import type { AggregationProblem } from './problem.js';

/** The aggregation task. */
export const aggregationTask: Task<AggregationProblem> = {
  name: 'aggregation',
  loadProblems: (options) => loadAggregationSplit(options),
  createEpisode: (options) => createAggregationEpisode(options),
};
