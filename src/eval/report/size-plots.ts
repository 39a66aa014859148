// Plots of one metric against team size N (the paper's Figure 11 columns): one line per evaluated
// policy, a point at each evaluated N and a ± SE error bar over seeds. Points of different policies at
// the same N are spread sideways a little so their error bars stay visible.

import type { Evaluation } from '../compare.js';
import type { VegaLiteSpec } from './vega-svg.js';
import { METRIC_INFO, summarySizes, type MetricInfo, type MetricName, type MetricSummary, type SizeSummary } from '../summary.js';

/** A metric to plot: how it is shown and where a size summary holds it. */
export interface PlottedMetric {
  /** Label, range and display. */
  readonly info: MetricInfo;
  /** Its summary at one size, or undefined where the size has none. */
  of(size: SizeSummary): MetricSummary | undefined;
}

/** One of summary.json's plain metrics. */
export function plainMetric(name: MetricName): PlottedMetric {
  return { info: METRIC_INFO[name], of: (size) => size[name] };
}

/** A task's own metric (Task.metrics), shown as the summary declares it. */
export function taskMetric(name: string, info: MetricInfo): PlottedMetric {
  return { info, of: (size) => size.taskMetrics?.[name] };
}

/** What to plot. */
export interface SizePlotOptions {
  /** The labelled summaries, one line each (those without the metric are skipped). */
  readonly evaluations: readonly Evaluation[];
  /** The metric on the y axis. */
  readonly metric: PlottedMetric;
}

/** One plotted point: mean ± SE of a series at one N, in display units. */
export interface MeanSePoint {
  /** Legend entry (policy label, or another grouping such as the exit door). */
  readonly series: string;
  /** Facet (policy label) where the plot is faceted, else the series. */
  readonly panel: string;
  /** Team size. */
  readonly n: number;
  /** Horizontal position: N plus the sideways offset. */
  readonly x: number;
  /** Mean over seeds. */
  readonly mean: number;
  /** mean − SE (mean when SE is undefined). */
  readonly lo: number;
  /** mean + SE. */
  readonly hi: number;
}

/** How to lay out mean ± SE points against N. */
export interface MeanSeEncodingOptions {
  /** Every N that has a point (axis ticks). */
  readonly sizes: readonly number[];
  /** The y-axis title. */
  readonly yTitle: string;
  /** Fixed y domain, or null to start at zero and fit the data. */
  readonly yDomain: readonly [number, number] | null;
  /** Legend title. */
  readonly seriesTitle: string;
  /** Legend order. */
  readonly seriesOrder: readonly string[];
}

/** One metric summary to turn into a point. */
export interface MeanSePointOptions {
  /** Legend entry. */
  readonly series: string;
  /** Facet. */
  readonly panel: string;
  /** Team size. */
  readonly n: number;
  /** Sideways offset from seriesOffset. */
  readonly offset: number;
  /** The values over seeds. */
  readonly metric: MetricSummary;
  /** Display factor (100 for percent metrics). */
  readonly scale: number;
}

/** Where a series sits among others on the N axis. */
export interface SeriesOffsetOptions {
  /** Index of the series. */
  readonly index: number;
  /** Number of series. */
  readonly count: number;
  /** Every N on the axis. */
  readonly sizes: readonly number[];
}

/** The encoding and layers that mean ± SE plots share, to be spread into a unit or facet spec. */
export interface MeanSeLayers {
  /** x (N) and color (series) encodings. */
  readonly encoding: Record<string, unknown>;
  /** Error bars, lines and points. */
  readonly layer: Record<string, unknown>[];
}

/** Mean ± SE of a metric summary as a point (scaled for display), or null when the mean is undefined. */
export function meanSePoint(options: MeanSePointOptions): MeanSePoint | null {
  const { metric, scale } = options;
  if (metric.mean === null) return null;
  const mean = metric.mean * scale;
  const se = (metric.se ?? 0) * scale;
  return { series: options.series, panel: options.panel, n: options.n, x: options.n + options.offset, mean, lo: mean - se, hi: mean + se };
}

/** The sideways offset of series `index` of `count` on an N axis spanning `sizes`. */
export function seriesOffset(options: SeriesOffsetOptions): number {
  const span = Math.max(...options.sizes) - Math.min(...options.sizes) || 1;
  return (options.index - (options.count - 1) / 2) * 0.015 * span;
}

/** The shared x/color encoding and the error-bar, line and point layers of a mean ± SE plot. */
export function meanSeEncoding(options: MeanSeEncodingOptions): MeanSeLayers {
  const min = Math.min(...options.sizes);
  const max = Math.max(...options.sizes);
  const pad = Math.max(0.5, 0.04 * (max - min));
  const y = {
    type: 'quantitative',
    title: options.yTitle,
    scale: options.yDomain === null ? { zero: true } : { domain: [...options.yDomain] },
  };
  return {
    encoding: {
      x: {
        field: 'x',
        type: 'quantitative',
        title: 'Team size N',
        scale: { domain: [min - pad, max + pad], nice: false, zero: false },
        axis: { values: [...options.sizes], format: 'd', grid: false },
      },
      color: { field: 'series', type: 'nominal', title: options.seriesTitle, sort: [...options.seriesOrder] },
    },
    layer: [
      { name: 'errorbars', mark: { type: 'errorbar', ticks: true }, encoding: { y: { ...y, field: 'lo' }, y2: { field: 'hi' } } },
      { name: 'lines', mark: { type: 'line', strokeWidth: 1.5 }, encoding: { y: { ...y, field: 'mean' } } },
      { name: 'points', mark: { type: 'point', filled: true, size: 45, opacity: 1 }, encoding: { y: { ...y, field: 'mean' } } },
    ],
  };
}

/** The y-axis title of a metric (with "(%)" for percent metrics). */
export function metricAxisTitle(info: MetricInfo): string {
  return info.percent ? `${info.label} (%)` : info.label;
}

/** Whether some size of some evaluation has the metric. */
export function plotHasData(evaluations: readonly Evaluation[], metric: PlottedMetric): boolean {
  return evaluations.some((evaluation) => Object.values(evaluation.summary.sizes).some((size) => metric.of(size) !== undefined));
}

/** A Vega-Lite spec of one metric against N, one line per evaluation with the metric. */
export function sizePlotSpec(options: SizePlotOptions): VegaLiteSpec {
  const { metric } = options;
  const info = metric.info;
  const withMetric = options.evaluations.filter((evaluation) => plotHasData([evaluation], metric));
  const sizes = [...new Set(withMetric.flatMap((evaluation) => summarySizes(evaluation.summary)))].sort((x, y) => x - y);
  const points = withMetric.flatMap((evaluation, index) =>
    summarySizes(evaluation.summary).flatMap((n) => {
      const summary = metric.of(evaluation.summary.sizes[String(n)]);
      if (summary === undefined) return [];
      const offset = seriesOffset({ index, count: withMetric.length, sizes });
      const point = meanSePoint({ series: evaluation.label, panel: evaluation.label, n, offset, metric: summary, scale: info.percent ? 100 : 1 });
      return point === null ? [] : [point];
    }),
  );
  const yDomain: readonly [number, number] | null = info.percent ? [0, 100] : info.range === 'fraction' ? [0, 1] : null;
  return {
    width: 340,
    height: 230,
    data: { values: points },
    ...meanSeEncoding({ sizes, yTitle: metricAxisTitle(info), yDomain, seriesTitle: 'Policy', seriesOrder: withMetric.map((e) => e.label) }),
  };
}
