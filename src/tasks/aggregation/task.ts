// The information aggregation task (Section 4.2): each agent holds one private number in 1..99 and the
// team must return all N numbers in ascending order, duplicates kept. `aggregation-digits` (ours, the
// CPU mini's task) is the same task with numbers 1..9, from its own splits.

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

/** Aggregation with single-digit private numbers (1..9): the same episodes, prompts and grading. */
export const aggregationDigitsTask: Task<AggregationProblem> = {
  name: 'aggregation-digits',
  loadProblems: (options) => loadAggregationSplit({ ...options, dataset: 'aggregation-digits' }),
  createEpisode: (options) => createAggregationEpisode(options),
};

/** Whether a task name is aggregation or one of its variants. */
export function isAggregationTask(task: string): boolean {
  return task === 'aggregation' || task.startsWith('aggregation-');
}
