// The plain-text table `swarm eval` prints when it finishes: per team size, mean ± SE over seeds of
// success (percent), tokens per team, token efficiency, message calls, for exploration room overlap,
// and the task's own metrics (Task.metrics) under their labels.

import { formatStatistic } from '../comparison-table.js';
import { isExplorationTask, summarySizes, type MetricSummary, type Summary } from '../summary.js';

function cell(metric: MetricSummary | undefined, scale = 1): string {
  if (metric === undefined || metric.mean === null) return '—';
  const mean = formatStatistic(metric.mean * scale);
  return metric.se === null ? mean : `${mean} ± ${formatStatistic(metric.se * scale)}`;
}

/** The summary as an aligned text table, one row per team size. */
export function formatSummaryTable(summary: Summary): string {
  const exploration = isExplorationTask(summary.task);
  const own = Object.entries(summary.taskMetrics ?? {});
  const titles = ['N', 'success %', 'tokens/team', 'efficiency', 'messages/team', ...(exploration ? ['room overlap'] : []), ...own.map(([, info]) => (info.percent ? `${info.label} %` : info.label))];
  const rows = summarySizes(summary).map((n) => {
    const size = summary.sizes[String(n)];
    const tokens = size.tokens.mean === null ? '—' : `${Math.round(size.tokens.mean)}${size.tokens.se === null ? '' : ` ± ${Math.round(size.tokens.se)}`}`;
    return [String(n), cell(size.success, 100), tokens, cell(size.tokenEfficiency), cell(size.messageCalls), ...(exploration ? [cell(size.roomOverlap)] : []), ...own.map(([name, info]) => cell(size.taskMetrics?.[name], info.percent ? 100 : 1))];
  });
  const widths = titles.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: readonly string[]): string => cells.map((text, column) => text.padStart(widths[column])).join('  ');
  return [line(titles), ...rows.map(line)].join('\n') + '\n';
}
