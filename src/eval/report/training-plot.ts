// Training curves of a run's RL updates (one metrics.jsonl object per update), as the paper plots
// training (Figures 6 and 15, App. K): reward and success with a 10-update moving average, tokens
// per team, message calls, the share of teams in each communication structure, read-before-send,
// false reports (exploration) and the share of tokens the IcePop mask removed. One panel per figure,
// each with its own y scale; a panel whose series never change (or are absent) is left out, so
// a run without messages or without masking shows only what moved.

import { ConfigError } from '../../errors.js';
import { STRUCTURE_CLASS_LABELS, STRUCTURE_CLASSES } from '../summary.js';
import type { VegaLiteSpec } from './vega-svg.js';

/** One update's training metrics: `update` and the flattened fields of metrics.jsonl (others are ignored). */
export type TrainingMetricsRow = Readonly<Record<string, unknown>> & { readonly update: number };

/** One plotted value. */
export interface TrainingPoint {
  /** The update number. */
  readonly update: number;
  /** The panel. */
  readonly panel: string;
  /** The line within the panel (a metric, its moving average, or a structure class). */
  readonly series: string;
  /** Its value at that update. */
  readonly value: number;
}

/** Updates the moving average spans (the paper bins training in 10 updates, App. K.1). */
export const MOVING_AVERAGE_UPDATES = 10;

const MOVING = `mean of ${MOVING_AVERAGE_UPDATES} updates`;

/** A panel: its title and how each row gives its series' values (null: none at that update). */
interface Panel {
  readonly title: string;
  readonly series: (row: TrainingMetricsRow) => Readonly<Record<string, number | null>>;
  /** Adds the trailing moving average of its single series. */
  readonly smoothed?: boolean;
}

const number = (row: TrainingMetricsRow, field: string): number | null => {
  const value = row[field];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
};

/** The paper's training figures, in order. */
const PANELS: readonly Panel[] = [
  { title: 'Reward', series: (row) => ({ reward: number(row, 'reward') }), smoothed: true },
  { title: 'Success', series: (row) => ({ success: number(row, 'success') }), smoothed: true },
  { title: 'Tokens per team', series: (row) => ({ tokens: number(row, 'tokens') }) },
  { title: 'Message calls per team', series: (row) => ({ messages: number(row, 'messages') }) },
  {
    title: 'Communication structure (share of teams)',
    // Flattened rows (training-metrics-file.ts): structure.oneBroadcastEach is structureOneBroadcastEach.
    series: (row) => Object.fromEntries(STRUCTURE_CLASSES.map((name) => [STRUCTURE_CLASS_LABELS[name], number(row, `structure${name[0].toUpperCase()}${name.slice(1)}`)])),
  },
  { title: 'Read before sending own number', series: (row) => ({ readBeforeSend: number(row, 'readBeforeSend') }) },
  {
    title: 'False "exhausted" reports',
    series: (row) => ({ 'teams that read one': number(row, 'falseReportReadTeams'), 'share of reports': number(row, 'falseReportShare') }),
  },
  { title: 'IcePop-masked share of tokens', series: (row) => ({ maskFraction: number(row, 'maskFraction') }) },
];

function checkUpdates(rows: readonly TrainingMetricsRow[]): void {
  rows.forEach((row, index) => {
    if (typeof row.update !== 'number' || !Number.isFinite(row.update)) {
      throw new ConfigError(`training metrics row ${index}: update is ${JSON.stringify(row.update)}; expected the update number.`);
    }
  });
}

/** Every point of the panels that change over the run, moving averages included; throws ConfigError when a row has no finite update. */
export function trainingPoints(rows: readonly TrainingMetricsRow[]): TrainingPoint[] {
  checkUpdates(rows);
  const points: TrainingPoint[] = [];
  for (const panel of PANELS) {
    const mine: TrainingPoint[] = [];
    for (const row of rows) {
      for (const [series, value] of Object.entries(panel.series(row))) {
        if (value !== null) mine.push({ update: row.update, panel: panel.title, series, value });
      }
    }
    // A constant (or empty) panel says nothing over training.
    if (mine.length === 0 || mine.every((point) => point.value === mine[0].value)) continue;
    points.push(...mine);
    if (panel.smoothed === true) {
      mine.forEach((point, index) => {
        const window = mine.slice(Math.max(0, index - MOVING_AVERAGE_UPDATES + 1), index + 1);
        points.push({ ...point, series: MOVING, value: window.reduce((sum, p) => sum + p.value, 0) / window.length });
      });
    }
  }
  return points;
}

/** The titles of the panels drawn for these rows, in order. */
export function trainingPanels(rows: readonly TrainingMetricsRow[]): string[] {
  const drawn = new Set(trainingPoints(rows).map((point) => point.panel));
  return PANELS.map((panel) => panel.title).filter((title) => drawn.has(title));
}

/** A Vega-Lite spec of the training figures: one panel per figure, three per row, series by colour. */
export function trainingPlotSpec(rows: readonly TrainingMetricsRow[]): VegaLiteSpec {
  return {
    data: { values: trainingPoints(rows) },
    facet: { field: 'panel', type: 'nominal', title: null, sort: trainingPanels(rows) },
    columns: 3,
    // Independent axes give every panel its own x axis (no empty axes under a short last row).
    resolve: { scale: { y: 'independent' }, axis: { x: 'independent' } },
    spec: {
      width: 240,
      height: 140,
      name: 'curves',
      mark: { type: 'line', strokeWidth: 1.5 },
      encoding: {
        x: { field: 'update', type: 'quantitative', title: 'Update' },
        y: { field: 'value', type: 'quantitative', title: null, scale: { zero: false } },
        color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'bottom', columns: 3 } },
        strokeDash: { condition: { test: `datum.series === '${MOVING}'`, value: [4, 2] }, value: [1, 0] },
      },
    },
  };
}
