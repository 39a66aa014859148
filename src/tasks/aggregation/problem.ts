// Aggregation problems (Appendix H): private integers drawn uniformly from 1..99, four per training
// problem and sixteen per development or evaluation problem (the first N are used at team size N).
// The `aggregation-digits` variant (ours, the CPU mini's task) draws from 1..9 instead.

import { ConfigError, FormatError } from '../../errors.js';
import type { Rng } from '../../common/random.js';
import type { TaskProblem } from '../task.js';
import { MAX_WORD_NUMBER, MIN_WORD_NUMBER } from './number-words.js';

/** Numbers per training problem (Appendix H: one per agent of a training team of four). */
export const TRAIN_PROBLEM_NUMBERS = 4;
/** Numbers per development and evaluation problem (Appendix H: sixteen, the largest team size). */
export const HELD_OUT_PROBLEM_NUMBERS = 16;

/** The largest private number of the `aggregation-digits` variant (ours): single digits, one..nine. */
export const DIGITS_MAX_NUMBER = 9;

/** One aggregation problem: agent i of a team of N holds numbers[i], for i < N. */
export interface AggregationProblem extends TaskProblem {
  /** The private integers, each in 1..99 (1..9 in the digits variant). */
  readonly numbers: readonly number[];
}

/** Options of generateAggregationProblem. */
export interface GenerateAggregationProblemOptions {
  /** The problem's id. */
  readonly id: string;
  /** How many numbers to draw. */
  readonly size: number;
  /** The stream to draw them from. */
  readonly rng: Rng;
  /** The largest number drawn (default 99, the paper's; at most 99, the largest with a word form). */
  readonly maxNumber?: number;
}

/** Draws a problem: size integers, each uniform in 1..maxNumber and independent (duplicates allowed). */
export function generateAggregationProblem(options: GenerateAggregationProblemOptions): AggregationProblem {
  if (!Number.isInteger(options.size) || options.size < 1) {
    throw new ConfigError(`generateAggregationProblem: size must be a positive integer, got ${String(options.size)}.`);
  }
  const maxNumber = options.maxNumber ?? MAX_WORD_NUMBER;
  if (!Number.isInteger(maxNumber) || maxNumber < MIN_WORD_NUMBER || maxNumber > MAX_WORD_NUMBER) {
    throw new ConfigError(`generateAggregationProblem: maxNumber must be an integer in 1..99, got ${String(maxNumber)}.`);
  }
  const span = maxNumber - MIN_WORD_NUMBER + 1;
  const numbers = Array.from({ length: options.size }, () => MIN_WORD_NUMBER + options.rng.nextInt(span));
  return { id: options.id, numbers };
}

/** Key for keeping splits disjoint: the sorted first four numbers, which fix the answer of a team of four. */
export function aggregationProblemKey(problem: AggregationProblem): string {
  return problem.numbers
    .slice(0, TRAIN_PROBLEM_NUMBERS)
    .sort((x, y) => x - y)
    .join(',');
}

/** Reads a problem from parsed JSON; throws FormatError naming `where` when the value is malformed or a number exceeds maxNumber. */
export function aggregationProblemFromJson(value: unknown, where: string, maxNumber: number = MAX_WORD_NUMBER): AggregationProblem {
  const record = value as { id?: unknown; numbers?: unknown } | null;
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new FormatError(`${where}: expected an object {"id": ..., "numbers": [...]}.`);
  }
  if (typeof record.id !== 'string' || record.id === '') throw new FormatError(`${where}: "id" must be a non-empty string.`);
  const numbers = record.numbers;
  if (
    !Array.isArray(numbers) ||
    numbers.length < 1 ||
    !numbers.every((n) => Number.isInteger(n) && n >= MIN_WORD_NUMBER && n <= maxNumber)
  ) {
    throw new FormatError(`${where}: "numbers" must be a non-empty array of integers in 1..${maxNumber}.`);
  }
  return { id: record.id, numbers: numbers as number[] };
}
