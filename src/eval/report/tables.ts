// The report's HTML tables: the evaluations it shows (policy, task, seeds, problems, allowance,
// temperature, provenance) and the paired comparisons in the layout of the paper's Table 9.

import type { Comparison, Evaluation } from '../compare.js';
import { COMPARISON_COLUMNS, comparisonCells, SIGNIFICANCE_LEVEL, type ComparisonCells } from '../comparison-table.js';
import { summarySizes } from '../summary.js';
import { escapeHtml } from './html.js';

const NUMERIC_COMPARISON_CELLS: readonly (keyof ComparisonCells)[] = ['n', 'effect', 'dz', 't', 'p', 'pCorrected'];

function row(cells: readonly string[], numeric: readonly boolean[] = []): string {
  return `<tr>${cells.map((cell, index) => `<td${numeric[index] ? ' class="number"' : ''}>${escapeHtml(cell)}</td>`).join('')}</tr>`;
}

function head(titles: readonly string[]): string {
  return `<thead><tr>${titles.map((title) => `<th>${escapeHtml(title)}</th>`).join('')}</tr></thead>`;
}

/** One row per evaluation: what was evaluated, how, and by which version. */
export function evaluationsTableHtml(evaluations: readonly Evaluation[]): string {
  const titles = ['Policy', 'Task', 'Description', 'Model', 'Messaging', 'Team sizes', 'Seeds', 'Problems', 'Allowance L', 'Temperature', 'Created', 'Package'];
  const rows = evaluations.map(({ label, summary }) =>
    row([
      label,
      summary.task,
      summary.policy.description,
      summary.policy.model ?? 'scripted',
      summary.comm ? (summary.messages === undefined ? 'on' : `on, ablated: ${summary.messages}`) : 'off (best-of-N)',
      summarySizes(summary).join(', '),
      summary.seeds.join(', '),
      `${summary.problems.count} (${summary.problems.split})`,
      `${summary.allowance.tokensPerAgent} + ${summary.allowance.finalAnswerTokens}`,
      String(summary.temperature),
      summary.createdAt,
      summary.packageVersion,
    ]),
  );
  return `<table class="evaluations">${head(titles)}<tbody>${rows.join('')}</tbody></table>`;
}

/** The comparisons as an HTML table with a legend line. */
export function comparisonsTableHtml(comparisons: readonly Comparison[]): string {
  const keys = Object.keys(COMPARISON_COLUMNS) as (keyof ComparisonCells)[];
  const rows = comparisons.map((comparison) => {
    const cells = comparisonCells(comparison);
    return row(
      keys.map((key) => cells[key]),
      keys.map((key) => NUMERIC_COMPARISON_CELLS.includes(key)),
    );
  });
  const legend =
    'Effects are first minus second (success in percentage points). Two-sided paired t-tests on seed values; d_z = mean/sd of the differences. ' +
    `Before/After: p < ${SIGNIFICANCE_LEVEL} before/after Bonferroni correction within the family (family size in parentheses).`;
  return [
    `<table class="comparisons">${head(keys.map((key) => COMPARISON_COLUMNS[key]))}<tbody>${rows.join('')}</tbody></table>`,
    `<p class="muted">${escapeHtml(legend)}</p>`,
  ].join('\n');
}
