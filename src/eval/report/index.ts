// The report layer's public surface: renderReport and the types its inputs use.

export { renderReport, type RenderReportOptions } from './render-report.js';
export { messageGraphSpec, validateMessageGraph, type MessageGraph, type MessageGraphEdge } from './message-graph.js';
export { trainingPanels, type TrainingMetricsRow } from './training-plot.js';
export { summaryLabels } from './summary-labels.js';
export { renderVegaLiteSvg, type VegaLiteSpec } from './vega-svg.js';
