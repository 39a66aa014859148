// `swarm report` without a terminal: loads evaluation directories, compares every comparable pair
// (same task, problems and seeds) on the default metrics, samples message graphs from the traces and
// renders one self-contained HTML page. Families are the default ones (one per metric and N) within
// each group of comparable evaluations, named with the task.

import { join } from 'node:path';
import type { ComparisonFamily, ComparisonSpec } from '../compare-config.js';
import { compareEvaluations, defaultCompareConfig, type Comparison, type Evaluation } from '../compare.js';
import type { MessageGraph } from '../report/message-graph.js';
import { renderReport } from '../report/render-report.js';
import { summaryLabels } from '../report/summary-labels.js';
import type { TrainingMetricsRow } from '../report/training-plot.js';
import { readSummary, SUMMARY_FILE_NAME } from '../summary-file.js';
import { summarySizes } from '../summary.js';
import { findEvaluationDirs } from './evaluation-dirs.js';
import { sampleMessageGraph } from './sample-message-graphs.js';

/** Options of buildEvaluationReport. */
export interface BuildEvaluationReportOptions {
  /** Evaluation directories, or folders of them. */
  readonly paths: readonly string[];
  /** Page title; default "s³ evaluation report". */
  readonly title?: string;
  /** A training run's metrics, one row per update: drawn as training curves. */
  readonly trainingMetrics?: readonly TrainingMetricsRow[];
}

/** The rendered report and what it holds. */
export interface EvaluationReport {
  /** The self-contained HTML page. */
  readonly html: string;
  /** The evaluation directories shown, in order. */
  readonly dirs: readonly string[];
  /** The comparisons tabulated. */
  readonly comparisons: readonly Comparison[];
  /** The sample message graphs drawn. */
  readonly messageGraphs: readonly MessageGraph[];
}

// Evaluations a paired test may compare share task, split, problem ids and seeds.
function comparabilityKey(evaluation: Evaluation): string {
  const { task, problems, seeds } = evaluation.summary;
  return JSON.stringify([task, problems.split, problems.ids, seeds]);
}

/** Default comparisons of every pair with a common team size within each comparable group. */
export function defaultReportComparisons(evaluations: readonly Evaluation[]): Comparison[] {
  const groups = new Map<string, Evaluation[]>();
  for (const evaluation of evaluations) groups.set(comparabilityKey(evaluation), [...(groups.get(comparabilityKey(evaluation)) ?? []), evaluation]);
  const comparisons: Comparison[] = [];
  for (const group of groups.values()) {
    const families = new Map<string, ComparisonSpec[]>();
    for (let i = 0; i < group.length; i += 1) {
      for (let j = i + 1; j < group.length; j += 1) {
        const sizes = new Set(summarySizes(group[j].summary));
        if (!summarySizes(group[i].summary).some((n) => sizes.has(n))) continue;
        for (const family of defaultCompareConfig([group[i], group[j]]).families) {
          const name = `${group[i].summary.task}: ${family.name}`;
          families.set(name, [...(families.get(name) ?? []), ...family.comparisons]);
        }
      }
    }
    if (families.size === 0) continue;
    const config = { families: [...families].map(([name, specs]): ComparisonFamily => ({ name, comparisons: specs })) };
    comparisons.push(...compareEvaluations({ evaluations: group, config }));
  }
  return comparisons;
}

/** Loads the evaluations, compares them, samples message graphs and renders the report. */
export async function buildEvaluationReport(options: BuildEvaluationReportOptions): Promise<EvaluationReport> {
  const dirs = options.paths.length === 0 ? [] : await findEvaluationDirs(options.paths);
  const summaries = await Promise.all(dirs.map((dir) => readSummary(join(dir, SUMMARY_FILE_NAME))));
  const labels = summaryLabels(summaries);
  const evaluations = summaries.map((summary, index): Evaluation => ({ label: labels[index], summary }));
  const comparisons = defaultReportComparisons(evaluations);
  const graphs = await Promise.all(dirs.map((dir, index) => sampleMessageGraph({ dir, evaluation: evaluations[index] })));
  const messageGraphs = graphs.filter((graph): graph is MessageGraph => graph !== null);
  const html = await renderReport({
    title: options.title ?? 's³ evaluation report',
    summaries,
    comparisons,
    messageGraphs,
    ...(options.trainingMetrics === undefined ? {} : { trainingMetrics: options.trainingMetrics }),
  });
  return { html, dirs, comparisons, messageGraphs };
}
