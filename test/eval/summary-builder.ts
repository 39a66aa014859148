// Builds valid summaries for tests from per-seed values (NaN: undefined for that seed); required
// metrics that a test does not care about get fixed filler values.

import { aggregateSeeds } from '../../src/eval/seed-aggregate.js';
import {
  isExplorationTask,
  REQUIRED_METRICS,
  STRUCTURE_CLASSES,
  type MetricName,
  type MetricSummary,
  type SizeSummary,
  type StructureClass,
  type Summary,
} from '../../src/eval/summary.js';

/** Per-seed values of one team size. */
export type SizeValues = Partial<Record<MetricName, number[]>> & {
  structures?: Record<StructureClass, number[]>;
  successByExitDoor?: Record<string, number[]>;
};

/** What a test summary differs in. */
export interface BuildSummaryOptions {
  name: string;
  task?: string;
  comm?: boolean;
  seeds?: number[];
  problemIds?: string[];
  sizes: Record<number, SizeValues>;
}

const FILLER: Record<string, number> = { tokens: 20_000, messageCalls: 4, tokenEfficiency: 1, roomOverlap: 0.4 };

/** A summary that passes validation. */
export function buildSummary(options: BuildSummaryOptions): Summary {
  const task = options.task ?? 'aggregation';
  const seeds = options.seeds ?? [1, 2, 3];
  const ids = options.problemIds ?? ['p/0', 'p/1', 'p/2', 'p/3'];
  const required: MetricName[] = isExplorationTask(task) ? [...REQUIRED_METRICS, 'roomOverlap'] : [...REQUIRED_METRICS];
  const sizes: Record<string, SizeSummary> = {};
  for (const [n, values] of Object.entries(options.sizes)) {
    const size: Record<string, unknown> = {};
    for (const metric of required) size[metric] = aggregateSeeds(seeds.map(() => FILLER[metric] ?? 0.5));
    for (const [key, value] of Object.entries(values)) {
      if (key === 'structures' || key === 'successByExitDoor') {
        const group: Record<string, MetricSummary> = {};
        for (const [name, perSeed] of Object.entries(value as Record<string, number[]>)) group[name] = aggregateSeeds(perSeed);
        size[key] = group;
      } else {
        size[key] = aggregateSeeds(value as number[]);
      }
    }
    sizes[n] = size as SizeSummary;
  }
  return {
    schemaVersion: 1,
    task,
    policy: { name: options.name, description: `${options.name} (test)`, model: null },
    comm: options.comm ?? true,
    seeds,
    problems: { split: 'eval', count: ids.length, ids },
    allowance: { tokensPerAgent: 8192, finalAnswerTokens: 1024 },
    temperature: 1,
    createdAt: '2025-01-31T12:00:00.000Z',
    packageVersion: '0.1.0',
    sizes,
  };
}

/** Every structure class with the same per-seed shares pattern, summing to 1 per seed. */
export function structureValues(shares: [number, number, number, number][]): Record<StructureClass, number[]> {
  return Object.fromEntries(STRUCTURE_CLASSES.map((name, index) => [name, shares.map((seed) => seed[index])])) as Record<StructureClass, number[]>;
}
