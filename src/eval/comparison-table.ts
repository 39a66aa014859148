// How comparisons are shown: the `--json` object of `swarm compare` (non-finite numbers as null) and a
// text table in the layout of the paper's Table 9 (family, contrast, N, metric, effect ± SE, d_z,
// significance before and after Bonferroni correction with the family size). The HTML report reuses the
// cells.

import type { Comparison } from './compare.js';

/** Significance level of the Before/After columns. */
export const SIGNIFICANCE_LEVEL = 0.05;

/** One comparison as JSON: every number finite or null (NaN and ±Infinity cannot be written in JSON). */
export type ComparisonJson = { readonly [K in Exclude<keyof Comparison, 'metricInfo'>]: Comparison[K] extends number ? number | null : Comparison[K] };

/** The cells of one table row, already formatted. */
export interface ComparisonCells {
  /** Family name. */
  readonly family: string;
  /** "a vs. b". */
  readonly contrast: string;
  /** Team size. */
  readonly n: string;
  /** Metric label, with "(pp)" for percentage-point effects. */
  readonly metric: string;
  /** "effect ± SE" in display units. */
  readonly effect: string;
  /** Cohen's d_z. */
  readonly dz: string;
  /** t statistic with df. */
  readonly t: string;
  /** Uncorrected p-value. */
  readonly p: string;
  /** Corrected p-value. */
  readonly pCorrected: string;
  /** "Yes"/"No": p < 0.05 before correction. */
  readonly before: string;
  /** "Yes (k)"/"No (k)": p < 0.05 after correction, k the family size. */
  readonly after: string;
}

/** Column titles of the table, by cell. */
export const COMPARISON_COLUMNS: Readonly<Record<keyof ComparisonCells, string>> = {
  family: 'Family',
  contrast: 'Contrast',
  n: 'N',
  metric: 'Metric',
  effect: 'Effect ± SE',
  dz: 'd_z',
  t: 't (df)',
  p: 'p',
  pCorrected: 'p (Bonf.)',
  before: 'Before',
  after: 'After',
};

/** A number for a table: "—" for NaN, "∞"/"-∞", 2 decimals, 2 significant digits when small, exponent when huge. */
export function formatStatistic(value: number): string {
  if (Number.isNaN(value)) return '—';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  if (Math.abs(value) >= 1e6) return value.toExponential(2);
  if (value !== 0 && Math.abs(value) < 0.01) return value.toPrecision(2);
  return value.toFixed(2);
}

/** A p-value for a table: "—" for NaN, 4 decimals, or scientific notation below 0.001. */
export function formatPValue(p: number): string {
  if (Number.isNaN(p)) return '—';
  if (p === 0) return '0';
  return p < 0.001 ? p.toExponential(1) : p.toFixed(4);
}

/** An evaluation's label with its message ablation and thinking mode off, if so: "eval/drop [messages drop, no thinking]". */
function withAblation(label: string, messages: string | null, thinking: boolean): string {
  const notes = [...(messages === null ? [] : [`messages ${messages}`]), ...(thinking ? [] : ['no thinking'])];
  return notes.length === 0 ? label : `${label} [${notes.join(', ')}]`;
}

/** The formatted cells of one comparison (success effects in percentage points). */
export function comparisonCells(comparison: Comparison): ComparisonCells {
  const info = comparison.metricInfo;
  const scale = info.percent ? 100 : 1;
  const significant = (p: number): string => (p < SIGNIFICANCE_LEVEL ? 'Yes' : 'No');
  return {
    family: comparison.family,
    contrast: `${withAblation(comparison.a, comparison.aMessages, comparison.aThinking)} vs. ${withAblation(comparison.b, comparison.bMessages, comparison.bThinking)}`,
    n: String(comparison.n),
    metric: info.percent ? `${info.label} (pp)` : info.label,
    effect: `${formatStatistic(comparison.meanDiff * scale)} ± ${formatStatistic(comparison.se * scale)}`,
    dz: formatStatistic(comparison.dz),
    t: `${formatStatistic(comparison.t)} (${comparison.df})`,
    p: formatPValue(comparison.p),
    pCorrected: formatPValue(comparison.pCorrected),
    before: significant(comparison.p),
    after: `${significant(comparison.pCorrected)} (${comparison.familySize})`,
  };
}

/** The `swarm compare --json` object: {"comparisons": [...]} with NaN and ±Infinity written as null. */
export function comparisonsJson(comparisons: readonly Comparison[]): { comparisons: ComparisonJson[] } {
  const finite = (value: number): number | null => (Number.isFinite(value) ? value : null);
  return {
    comparisons: comparisons.map((c) => ({
      family: c.family,
      a: c.a,
      b: c.b,
      aMessages: c.aMessages,
      bMessages: c.bMessages,
      aThinking: c.aThinking,
      bThinking: c.bThinking,
      n: c.n,
      metric: c.metric,
      pairs: c.pairs,
      meanDiff: finite(c.meanDiff),
      se: finite(c.se),
      t: finite(c.t),
      df: c.df,
      p: finite(c.p),
      pCorrected: finite(c.pCorrected),
      familySize: c.familySize,
      dz: finite(c.dz),
    })),
  };
}

/** The comparisons as an aligned plain-text table with a one-line legend, like the paper's Table 9. */
export function formatComparisonTable(comparisons: readonly Comparison[]): string {
  const keys = Object.keys(COMPARISON_COLUMNS) as (keyof ComparisonCells)[];
  const rows = [COMPARISON_COLUMNS, ...comparisons.map(comparisonCells)];
  const widths = keys.map((key) => Math.max(...rows.map((row) => [...row[key]].length)));
  const line = (row: ComparisonCells): string =>
    keys
      .map((key, index) => row[key] + ' '.repeat(widths[index] - [...row[key]].length))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  const legend =
    'Effects are a − b (success in percentage points); two-sided paired t-tests on seed values; ' +
    `Before/After: p < ${SIGNIFICANCE_LEVEL} before/after Bonferroni correction (family size).`;
  return [line(COMPARISON_COLUMNS), rule, ...rows.slice(1).map(line), '', legend, ''].join('\n');
}
