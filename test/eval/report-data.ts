// Hand-built inputs for the report test: two aggregation and two exploration policies at N = 1, 2, 4, 8
// over six seeds, their comparisons, a training log and two message graphs.

import { compareEvaluations, type Evaluation } from '../../src/eval/compare.js';
import type { MessageGraph, TrainingMetricsRow } from '../../src/eval/report/index.js';
import type { Summary } from '../../src/eval/summary.js';
import { buildSummary, structureValues, type SizeValues } from './summary-builder.js';

/** The team sizes every test summary has. */
export const REPORT_SIZES = [1, 2, 4, 8];
const SEEDS = [101, 102, 103, 104, 105, 106];

// Per-seed deviations summing to 0 (sd 0.8); each series uses its own rotation, so paired differences vary.
const PATTERN = [-1, 0.4, -0.2, 1, 0.6, -0.8];
let rotation = 0;

// A per-seed series with mean `center` and deviations ±`spread` (shares must stay inside [0, 1]).
function seedValues(center: number, spread: number): number[] {
  rotation += 1;
  return PATTERN.map((_, index) => center + PATTERN[(index + rotation) % PATTERN.length] * spread);
}

function aggregationSizes(strength: number): Record<number, SizeValues> {
  return Object.fromEntries(
    REPORT_SIZES.map((n) => {
      const success = strength / (1 + 0.15 * (n - 1));
      const tokens = 6000 * n * (1.2 - 0.3 * strength);
      const silent = n === 1 ? 1 : 0.5 - 0.4 * strength;
      return [
        n,
        {
          success: seedValues(success, 0.1),
          tokens: seedValues(tokens, 900),
          tokenEfficiency: seedValues((success * n * 9216) / tokens, 0.08),
          messageCalls: n === 1 ? SEEDS.map(() => 0) : seedValues(n * (1 + strength), 0.4),
          centralization: n === 1 ? SEEDS.map(() => Number.NaN) : seedValues(0.3 - 0.2 * strength, 0.02),
          reciprocity: n === 1 ? SEEDS.map(() => Number.NaN) : seedValues(0.2 + 0.5 * strength, 0.03),
          structures: structureValues(SEEDS.map(() => (n === 1 ? [1, 0, 0, 0] : [silent, 0.2, 0.3 - 0.2 * strength, 0.5 - silent + 0.2 * strength]))),
        } satisfies SizeValues,
      ];
    }),
  );
}

function explorationSizes(strength: number): Record<number, SizeValues> {
  return Object.fromEntries(
    REPORT_SIZES.map((n) => {
      const success = 0.1 + 0.8 * (1 - (1 - 0.3 * strength) ** n);
      const tokens = 7000 * n;
      return [
        n,
        {
          success: seedValues(success, 0.08),
          tokens: seedValues(tokens, 900),
          tokenEfficiency: seedValues((success * n * 8192) / tokens, 0.06),
          messageCalls: strength > 0.8 ? seedValues(3 * n, 0.4) : SEEDS.map(() => 0),
          centralization: seedValues(0.2, 0.02),
          reciprocity: seedValues(0.5, 0.05),
          roomOverlap: n === 1 ? SEEDS.map(() => Number.NaN) : seedValues(0.6 - 0.3 * strength, 0.03),
          successByExitDoor: { 0: seedValues(Math.min(0.9, success * 1.1), 0.08), 1: seedValues(success, 0.08), 2: seedValues(success * 0.8, 0.08) },
        } satisfies SizeValues,
      ];
    }),
  );
}

/** Four summaries: aggregation s3 and individual reward; exploration s3 and s3 − communication. */
export function reportSummaries(): Summary[] {
  rotation = 0;
  return [
    buildSummary({ name: 's3', task: 'aggregation', seeds: SEEDS, sizes: aggregationSizes(0.85) }),
    buildSummary({ name: 's3: individual reward', task: 'aggregation', seeds: SEEDS, sizes: aggregationSizes(0.3) }),
    buildSummary({ name: 's3', task: 'exploration', seeds: SEEDS, sizes: explorationSizes(1) }),
    buildSummary({ name: 's3 − communication', task: 'exploration', comm: false, seeds: SEEDS, sizes: explorationSizes(0.6) }),
  ];
}

/** The default comparisons of each task's pair. */
export function reportComparisons(summaries: readonly Summary[]) {
  const evaluation = (index: number): Evaluation => ({ label: summaries[index].policy.name + (summaries[index].comm ? '' : ' (no messaging)'), summary: summaries[index] });
  return [...compareEvaluations({ evaluations: [evaluation(0), evaluation(1)] }), ...compareEvaluations({ evaluations: [evaluation(2), evaluation(3)] })];
}

/** Thirty updates of a training log with four numeric fields and one text field. */
export function reportTrainingMetrics(): TrainingMetricsRow[] {
  return Array.from({ length: 30 }, (_, update) => ({
    update,
    reward: 0.2 + 0.6 * (1 - Math.exp(-update / 8)) + 0.03 * Math.sin(update),
    success: 0.25 + 0.65 * (1 - Math.exp(-update / 8)),
    tokenEfficiency: 1 + 2 * (1 - Math.exp(-update / 10)),
    tokens: 30000 - 400 * update,
    phase: update < 15 ? 'early' : 'late',
    // Constant over the run: no panel.
    maskFraction: 0,
    structureOneBroadcastEach: Math.min(1, update / 20),
    structureConversation: Math.max(0, 1 - update / 20),
    structureRepeatedBroadcasts: 0,
    structureSilentAgent: 0,
  }));
}

/** A four-agent conversation and an eight-agent round of broadcasts. */
export function reportMessageGraphs(): MessageGraph[] {
  const eight = Array.from({ length: 8 }, (_, index) => `agent_${[3, 17, 22, 40, 5, 61, 9, 33][index]}`);
  return [
    {
      title: 'aggregation N=4, s3: individual reward, problem aggregation/eval/0003',
      agents: ['agent_12', 'agent_7', 'agent_53', 'agent_30'],
      edges: [
        { from: 'agent_12', to: 'agent_7', count: 3 },
        { from: 'agent_7', to: 'agent_12', count: 1 },
        { from: 'agent_12', to: 'agent_53', count: 2 },
        { from: 'agent_12', to: 'agent_30', count: 4 },
        { from: 'agent_53', to: 'agent_30', count: 1 },
      ],
    },
    {
      title: 'aggregation N=8, s3, problem aggregation/eval/0011',
      agents: eight,
      edges: eight.flatMap((from) => eight.filter((to) => to !== from).map((to) => ({ from, to, count: 1 }))),
    },
  ];
}
