// Success by the exit's door position at the first fork (exploration, Appendix M): for each policy a
// panel with one line per door position, mean ± SE over seeds against team size N.

import type { Evaluation } from '../compare.js';
import { summarySizes } from '../summary.js';
import { meanSeEncoding, meanSePoint, seriesOffset, type MeanSePoint } from './size-plots.js';
import type { VegaLiteSpec } from './vega-svg.js';

/** The evaluations that have success by exit door at some size. */
export function withExitDoors(evaluations: readonly Evaluation[]): Evaluation[] {
  return evaluations.filter((evaluation) => Object.values(evaluation.summary.sizes).some((size) => size.successByExitDoor !== undefined));
}

/** The legend entry of a door index. */
export function doorLabel(door: string): string {
  return `door ${door}`;
}

/** A Vega-Lite spec of success (%) by exit door against N, one panel per policy. */
export function exitDoorPlotSpec(evaluations: readonly Evaluation[]): VegaLiteSpec {
  const shown = withExitDoors(evaluations);
  const doors = [
    ...new Set(shown.flatMap((evaluation) => Object.values(evaluation.summary.sizes).flatMap((size) => Object.keys(size.successByExitDoor ?? {})))),
  ].sort((x, y) => Number(x) - Number(y));
  const sizes = [...new Set(shown.flatMap((evaluation) => summarySizes(evaluation.summary)))].sort((x, y) => x - y);
  const points: MeanSePoint[] = shown.flatMap((evaluation) =>
    summarySizes(evaluation.summary).flatMap((n) => {
      const byDoor = evaluation.summary.sizes[String(n)].successByExitDoor ?? {};
      return doors.flatMap((door, index) => {
        const metric = byDoor[door];
        if (metric === undefined) return [];
        const offset = seriesOffset({ index, count: doors.length, sizes });
        const point = meanSePoint({ series: doorLabel(door), panel: evaluation.label, n, offset, metric, scale: 100 });
        return point === null ? [] : [point];
      });
    }),
  );
  return {
    data: { values: points },
    facet: { column: { field: 'panel', type: 'nominal', title: null, sort: shown.map((e) => e.label) } },
    spec: {
      width: 260,
      height: 200,
      ...meanSeEncoding({
        sizes,
        yTitle: 'Success (%)',
        yDomain: [0, 100],
        seriesTitle: 'Exit door (0-based)',
        seriesOrder: doors.map(doorLabel),
      }),
    },
  };
}
