// Training curves over updates from a run's metrics log (one object per update, as in metrics.jsonl):
// one small panel per numeric field, reward, success and token efficiency first, each with its own y
// scale.

import { ConfigError } from '../../errors.js';
import type { VegaLiteSpec } from './vega-svg.js';

/** One update's training metrics: `update` and any numeric fields (others are ignored). */
export type TrainingMetricsRow = Readonly<Record<string, unknown>> & { readonly update: number };

/** One plotted value. */
export interface TrainingPoint {
  /** The update number. */
  readonly update: number;
  /** The field name. */
  readonly metric: string;
  /** Its value at that update. */
  readonly value: number;
}

/** Fields drawn first, in this order, when present. */
export const LEADING_TRAINING_FIELDS = ['reward', 'success', 'tokenEfficiency'];

/** The numeric fields to plot (every field other than update with a finite number in some row), leading fields first. */
export function trainingFields(rows: readonly TrainingMetricsRow[]): string[] {
  const found: string[] = [];
  for (const row of rows) {
    for (const [key, value] of Object.entries(row)) {
      if (key !== 'update' && typeof value === 'number' && Number.isFinite(value) && !found.includes(key)) found.push(key);
    }
  }
  return [...LEADING_TRAINING_FIELDS.filter((key) => found.includes(key)), ...found.filter((key) => !LEADING_TRAINING_FIELDS.includes(key))];
}

/** Every (update, field, value) with a finite value; throws ConfigError when a row has no finite update. */
export function trainingPoints(rows: readonly TrainingMetricsRow[]): TrainingPoint[] {
  const fields = trainingFields(rows);
  return rows.flatMap((row, index) => {
    if (typeof row.update !== 'number' || !Number.isFinite(row.update)) {
      throw new ConfigError(`training metrics row ${index}: update is ${JSON.stringify(row.update)}; expected the update number.`);
    }
    return fields.flatMap((metric) => {
      const value = row[metric];
      return typeof value === 'number' && Number.isFinite(value) ? [{ update: row.update, metric, value }] : [];
    });
  });
}

/** A Vega-Lite spec of training curves: one panel per numeric field, three panels per row. */
export function trainingPlotSpec(rows: readonly TrainingMetricsRow[]): VegaLiteSpec {
  return {
    data: { values: trainingPoints(rows) },
    facet: { field: 'metric', type: 'nominal', title: null, sort: trainingFields(rows) },
    columns: 3,
    // Independent axes give every panel its own x axis (no empty axes under a short last row).
    resolve: { scale: { y: 'independent' }, axis: { x: 'independent' } },
    spec: {
      width: 240,
      height: 140,
      name: 'curves',
      mark: { type: 'line', strokeWidth: 1.5, color: '#4c78a8' },
      encoding: {
        x: { field: 'update', type: 'quantitative', title: 'Update' },
        y: { field: 'value', type: 'quantitative', title: null, scale: { zero: false } },
      },
    },
  };
}
