// The fixed problem sets of both tasks (Appendix H, Table 3): train, development and evaluation
// splits, each generated from its own documented seed, kept disjoint, written once as JSONL files in
// the data directory and read back on later runs.
//
// Disjointness: splits are generated in the order eval, dev, train; a candidate whose key matches a
// problem already accepted (in its own split or an earlier one) is skipped. The key of an aggregation
// problem is its sorted first four numbers (the answer of a team of four); the key of a tree is its
// door-order pattern and exit position (labels carry no information). So the evaluation set never
// depends on the sizes of the other splits. Candidate k of a split is drawn from
// createRng(seed).fork(String(k)).
//
// The digits variant's training split is the exception within its own split: its 495 sorted quadruples
// are too few to draw hundreds of distinct ones without skewing the draws toward repeated digits (a
// split of nearly every quadruple once holds 25% all-distinct problems where draws hold 46%), so it
// skips only candidates that match a held-out key or repeat a training problem number for number, and
// follows the same distribution as the held-out problems it is evaluated on.

import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, FormatError } from '../errors.js';
import {
  aggregationProblemFromJson,
  aggregationProblemKey,
  DIGITS_MAX_NUMBER,
  generateAggregationProblem,
  HELD_OUT_PROBLEM_NUMBERS,
  TRAIN_PROBLEM_NUMBERS,
  type AggregationProblem,
} from './aggregation/problem.js';
import { explorationProblemFromJson, explorationProblemKey, explorationProblemToJson, type ExplorationProblem } from './exploration/problem.js';
import { generateTree } from './exploration/tree.js';
import { MAX_WORD_NUMBER } from './aggregation/number-words.js';
import { createRng } from '../common/random.js';
import { readOrCreateSplitFile } from './split-file.js';
import type { LoadProblemsOptions, Split } from './task.js';

/**
 * The problem sets: aggregation, its single-digit variant (ours, the CPU mini's), depth-3 trees (RL
 * and evaluation), depth-2 trees (SFT demonstrations).
 */
export type DatasetName = 'aggregation' | 'aggregation-digits' | 'exploration-d3' | 'exploration-d2';

/** The aggregation datasets. */
export type AggregationDatasetName = 'aggregation' | 'aggregation-digits';

/** Every dataset. */
export const DATASETS: readonly DatasetName[] = ['aggregation', 'aggregation-digits', 'exploration-d3', 'exploration-d2'];

/** The largest private number of each aggregation dataset: 99 (Appendix H) or 9 (the digits variant). */
export const AGGREGATION_MAX_NUMBERS: Readonly<Record<AggregationDatasetName, number>> = {
  aggregation: MAX_WORD_NUMBER,
  'aggregation-digits': DIGITS_MAX_NUMBER,
};

/**
 * Problems per split. Exploration: Table 3 (1,024 / 32 / 32 at both depths). Aggregation: 32 dev and 32
 * eval held-out problems (Appendix M); the paper does not state a training-set size, and 4,096 covers
 * the 6,400 problem draws of 200 updates × 32 problems with every problem seen at most twice on average.
 * The digits variant's training split has 1,024 problems, distinct as assignments of numbers to agents
 * (see the header: its 495 sorted quadruples allow no more distinct answers).
 */
export const SPLIT_SIZES: Readonly<Record<DatasetName, Readonly<Record<Split, number>>>> = {
  aggregation: { train: 4096, dev: 32, eval: 32 },
  'aggregation-digits': { train: 1024, dev: 32, eval: 32 },
  'exploration-d3': { train: 1024, dev: 32, eval: 32 },
  'exploration-d2': { train: 1024, dev: 32, eval: 32 },
};

/** The seed of every split, fixed before any training (Appendix H: "generated from different seeds"). */
export const SPLIT_SEEDS: Readonly<Record<DatasetName, Readonly<Record<Split, string>>>> = {
  aggregation: { train: 's3-splits-v1/aggregation/train', dev: 's3-splits-v1/aggregation/dev', eval: 's3-splits-v1/aggregation/eval' },
  'aggregation-digits': {
    // "draws": the second version of this split (the first was distinct by sorted quadruple, see the header).
    train: 's3-splits-v1/aggregation-digits/train-draws',
    dev: 's3-splits-v1/aggregation-digits/dev',
    eval: 's3-splits-v1/aggregation-digits/eval',
  },
  'exploration-d3': {
    train: 's3-splits-v1/exploration-d3/train',
    dev: 's3-splits-v1/exploration-d3/dev',
    eval: 's3-splits-v1/exploration-d3/eval',
  },
  'exploration-d2': {
    train: 's3-splits-v1/exploration-d2/train',
    dev: 's3-splits-v1/exploration-d2/dev',
    eval: 's3-splits-v1/exploration-d2/eval',
  },
};

/** Tree depth of each exploration dataset (Table 3). */
const TREE_DEPTHS = { 'exploration-d3': 3, 'exploration-d2': 2 } as const;

/** The order in which splits are generated, so that earlier ones never depend on later ones. */
const GENERATION_ORDER: readonly Split[] = ['eval', 'dev', 'train'];

/** Environment variable that overrides the data directory. */
export const DATA_DIR_ENV = 'S3_DATA_DIR';

/** The data directory: $S3_DATA_DIR when set, else ~/.cache/s3-swarm/splits/v1. */
export function defaultDataDir(): string {
  const fromEnv = process.env[DATA_DIR_ENV];
  return fromEnv !== undefined && fromEnv !== '' ? resolve(fromEnv) : join(homedir(), '.cache', 's3-swarm', 'splits', 'v1');
}

/** Identifies one split of one dataset. */
export interface SplitRef {
  /** The dataset. */
  readonly dataset: DatasetName;
  /** The split. */
  readonly split: Split;
}

/** Options of the split loaders. */
export interface LoadSplitOptions extends LoadProblemsOptions {
  /** The dataset. */
  readonly dataset: DatasetName;
}

/** The file of a split: <dataDir>/<dataset>-<split>.jsonl. */
export function splitFilePath(options: LoadSplitOptions): string {
  return join(resolve(options.dataDir ?? defaultDataDir()), `${options.dataset}-${options.split}.jsonl`);
}

function checkSplitRef(ref: SplitRef): void {
  if (!DATASETS.includes(ref.dataset)) {
    throw new ConfigError(`Unknown dataset ${JSON.stringify(ref.dataset)}; expected one of ${DATASETS.join(', ')}.`);
  }
  if (!Object.hasOwn(SPLIT_SIZES[ref.dataset], ref.split)) {
    throw new ConfigError(`Unknown split ${JSON.stringify(ref.split)}; expected train, dev or eval.`);
  }
}

interface Generator<P> {
  readonly candidate: (options: { id: string; attempt: number; split: Split }) => P;
  /** The disjointness key (see the header). */
  readonly key: (problem: P) => string;
  /** When set, the training split skips only held-out keys and repeats of this key within itself. */
  readonly trainRepeatKey?: (problem: P) => string;
}

function generateInOrder<P>(ref: SplitRef, generator: Generator<P>): P[] {
  const taken = new Set<string>();
  for (const split of GENERATION_ORDER) {
    const problems: P[] = [];
    const size = SPLIT_SIZES[ref.dataset][split];
    const width = String(size - 1).length;
    const repeatKey = split === 'train' ? generator.trainRepeatKey : undefined;
    const repeats = new Set<string>();
    for (let attempt = 0; problems.length < size; attempt += 1) {
      const id = `${ref.dataset}/${split}/${String(problems.length).padStart(width, '0')}`;
      const candidate = generator.candidate({ id, attempt, split });
      const key = generator.key(candidate);
      if (taken.has(key)) continue;
      if (repeatKey === undefined) {
        taken.add(key);
      } else {
        const repeat = repeatKey(candidate);
        if (repeats.has(repeat)) continue;
        repeats.add(repeat);
      }
      problems.push(candidate);
    }
    if (split === ref.split) return problems;
  }
  throw new ConfigError(`Unknown split ${JSON.stringify(ref.split)}.`);
}

/** Generates an aggregation split in memory (what the split file holds). */
export function generateAggregationSplit(split: Split, dataset: AggregationDatasetName = 'aggregation'): AggregationProblem[] {
  checkSplitRef({ dataset, split });
  return generateInOrder<AggregationProblem>(
    { dataset, split },
    {
      candidate: ({ id, attempt, split: candidateSplit }) =>
        generateAggregationProblem({
          id,
          size: candidateSplit === 'train' ? TRAIN_PROBLEM_NUMBERS : HELD_OUT_PROBLEM_NUMBERS,
          rng: createRng(SPLIT_SEEDS[dataset][candidateSplit]).fork(String(attempt)),
          maxNumber: AGGREGATION_MAX_NUMBERS[dataset],
        }),
      key: aggregationProblemKey,
      ...(dataset === 'aggregation-digits' ? { trainRepeatKey: (problem: AggregationProblem) => problem.numbers.join(',') } : {}),
    },
  );
}

/** Generates an exploration split in memory (what the split file holds). */
export function generateExplorationSplit(ref: SplitRef & { dataset: 'exploration-d3' | 'exploration-d2' }): ExplorationProblem[] {
  checkSplitRef(ref);
  return generateInOrder<ExplorationProblem>(ref, {
    candidate: ({ id, attempt, split }) => ({
      id,
      tree: generateTree({ depth: TREE_DEPTHS[ref.dataset], rng: createRng(SPLIT_SEEDS[ref.dataset][split]).fork(String(attempt)) }),
    }),
    key: explorationProblemKey,
  });
}

/** Loads an aggregation split (of `aggregation` unless dataset says otherwise), writing its file on first use; train problems have 4 numbers, others 16. */
export function loadAggregationSplit(options: LoadProblemsOptions & { dataset?: AggregationDatasetName }): Promise<readonly AggregationProblem[]> {
  const dataset = options.dataset ?? 'aggregation';
  const ref = { dataset, split: options.split } as const;
  checkSplitRef(ref);
  const path = splitFilePath({ ...options, ...ref });
  const size = options.split === 'train' ? TRAIN_PROBLEM_NUMBERS : HELD_OUT_PROBLEM_NUMBERS;
  return readOrCreateSplitFile<AggregationProblem>({
    path,
    ...ref,
    seed: SPLIT_SEEDS[dataset][options.split],
    count: SPLIT_SIZES[dataset][options.split],
    generate: () => generateAggregationSplit(options.split, dataset),
    encode: (problem) => ({ id: problem.id, numbers: problem.numbers }),
    decode: (value, where) => {
      const problem = aggregationProblemFromJson(value, where, AGGREGATION_MAX_NUMBERS[dataset]);
      if (problem.numbers.length !== size) {
        throw new FormatError(`${where}: a ${options.split} problem must have ${size} numbers, got ${problem.numbers.length}.`);
      }
      return problem;
    },
  });
}

/** Loads an exploration split (depth 3 or depth 2), writing its file on first use. */
export function loadExplorationSplit(
  options: LoadProblemsOptions & { dataset: 'exploration-d3' | 'exploration-d2' },
): Promise<readonly ExplorationProblem[]> {
  const ref = { dataset: options.dataset, split: options.split };
  checkSplitRef(ref);
  const path = splitFilePath(options);
  const depth = TREE_DEPTHS[options.dataset];
  return readOrCreateSplitFile<ExplorationProblem>({
    path,
    ...ref,
    seed: SPLIT_SEEDS[options.dataset][options.split],
    count: SPLIT_SIZES[options.dataset][options.split],
    generate: () => generateExplorationSplit(ref),
    encode: explorationProblemToJson,
    decode: (value, where) => {
      const problem = explorationProblemFromJson(value, where);
      if (problem.tree.depth !== depth) {
        throw new FormatError(`${where}: a tree of ${options.dataset} must have depth ${depth}, got ${problem.tree.depth}.`);
      }
      return problem;
    },
  });
}
