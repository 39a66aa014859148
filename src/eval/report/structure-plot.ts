// Communication structure shares (aggregation, Appendix K.1): for each policy a panel of stacked bars,
// one bar per team size N, split into the four structure classes by their mean share of episodes.

import type { Evaluation } from '../compare.js';
import { STRUCTURE_CLASS_LABELS, STRUCTURE_CLASSES, summarySizes } from '../summary.js';
import type { VegaLiteSpec } from './vega-svg.js';

/** One stacked segment: the mean share of a structure class at one N. */
export interface StructureShare {
  /** Policy label (the panel). */
  readonly policy: string;
  /** Team size. */
  readonly n: number;
  /** Structure class label. */
  readonly structure: string;
  /** Stacking position of the class. */
  readonly order: number;
  /** Mean share of episodes, in percent. */
  readonly share: number;
}

/** The evaluations that have structure shares at some size. */
export function withStructures(evaluations: readonly Evaluation[]): Evaluation[] {
  return evaluations.filter((evaluation) => Object.values(evaluation.summary.sizes).some((size) => size.structures !== undefined));
}

/** The stacked segments of every evaluation with structure shares. */
export function structureShares(evaluations: readonly Evaluation[]): StructureShare[] {
  return withStructures(evaluations).flatMap((evaluation) =>
    summarySizes(evaluation.summary).flatMap((n) => {
      const structures = evaluation.summary.sizes[String(n)].structures;
      if (structures === undefined) return [];
      return STRUCTURE_CLASSES.flatMap((name, order) => {
        const mean = structures[name].mean;
        return mean === null ? [] : [{ policy: evaluation.label, n, structure: STRUCTURE_CLASS_LABELS[name], order, share: mean * 100 }];
      });
    }),
  );
}

/** A Vega-Lite spec of structure shares: one panel per policy, one stacked bar per N. */
export function structurePlotSpec(evaluations: readonly Evaluation[]): VegaLiteSpec {
  return {
    data: { values: structureShares(evaluations) },
    facet: { column: { field: 'policy', type: 'nominal', title: null, sort: withStructures(evaluations).map((e) => e.label) } },
    spec: {
      width: { step: 26 },
      height: 200,
      name: 'bars',
      mark: { type: 'bar' },
      encoding: {
        x: { field: 'n', type: 'ordinal', title: 'Team size N', axis: { labelAngle: 0 } },
        y: { field: 'share', type: 'quantitative', title: 'Share of episodes (%)', stack: 'zero', scale: { domain: [0, 100] } },
        color: {
          field: 'structure',
          type: 'nominal',
          title: 'Structure',
          sort: STRUCTURE_CLASSES.map((name) => STRUCTURE_CLASS_LABELS[name]),
        },
        order: { field: 'order', type: 'quantitative' },
      },
    },
  };
}
