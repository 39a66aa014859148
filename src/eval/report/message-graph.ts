// Message graphs of sample episodes (like the paper's Figure 14): agents on a circle, a directed edge
// i → j with the number of messages from i that reached j (a broadcast counts once per recipient).
// The geometry is computed here; vega draws it: edges as rules whose width grows with the count,
// triangle arrowheads rotated along the edge, count labels on edges carrying more than one message
// (the thinnest width means one), agent nodes and names. Edges are shifted
// to their right-hand side so that i → j and j → i stay apart.

import { ConfigError } from '../../errors.js';
import type { VegaLiteSpec } from './vega-svg.js';

/** One directed edge of a message graph. */
export interface MessageGraphEdge {
  /** Sending agent (a name in agents). */
  readonly from: string;
  /** Receiving agent. */
  readonly to: string;
  /** Messages from `from` that reached `to`, ≥ 1. */
  readonly count: number;
}

/** The message graph of one episode. */
export interface MessageGraph {
  /** What episode it is, e.g. "aggregation N=4, s3, problem aggregation/eval/0003". */
  readonly title: string;
  /** The agents, drawn clockwise from the top. */
  readonly agents: readonly string[];
  /** The edges (at most one per ordered pair). */
  readonly edges: readonly MessageGraphEdge[];
}

// Layout in data units: agents on the unit circle, drawn at 75 pixels per unit on both axes (equal
// scales keep the arrowhead angles true); the wider x extent leaves room for names beside the circle.
const PIXELS_PER_UNIT = 75;
const X_EXTENT = 2;
const Y_EXTENT = 1.45;
const NODE_CLEARANCE = 0.24;
const EDGE_SHIFT = 0.05;
const COUNT_SHIFT = 0.13;
const NAME_RADIUS = 1.2;

/** Throws ConfigError unless every edge joins two different listed agents with a positive integer count, once per ordered pair. */
export function validateMessageGraph(graph: MessageGraph): void {
  const where = `message graph "${graph.title}"`;
  if (graph.agents.length === 0 || new Set(graph.agents).size !== graph.agents.length) {
    throw new ConfigError(`${where}: agents is ${JSON.stringify(graph.agents)}; expected a non-empty list of distinct names.`);
  }
  const seen = new Set<string>();
  graph.edges.forEach((edge, index) => {
    const field = `${where}: edges[${index}]`;
    for (const end of [edge.from, edge.to]) {
      if (!graph.agents.includes(end)) throw new ConfigError(`${field} names agent ${JSON.stringify(end)}; expected one of ${graph.agents.join(', ')}.`);
    }
    if (edge.from === edge.to) throw new ConfigError(`${field} goes from ${edge.from} to itself; expected an edge between two agents.`);
    if (!Number.isSafeInteger(edge.count) || edge.count < 1) throw new ConfigError(`${field}.count is ${edge.count}; expected a positive integer.`);
    const key = JSON.stringify([edge.from, edge.to]);
    if (seen.has(key)) throw new ConfigError(`${field} repeats the edge ${edge.from} → ${edge.to}; expected one edge per ordered pair with its count.`);
    seen.add(key);
  });
}

function agentPosition(index: number, count: number): { x: number; y: number } {
  const angle = Math.PI / 2 - (2 * Math.PI * index) / count;
  return { x: Math.cos(angle), y: Math.sin(angle) };
}

/** A Vega-Lite spec drawing one message graph. */
export function messageGraphSpec(graph: MessageGraph): VegaLiteSpec {
  validateMessageGraph(graph);
  const count = graph.agents.length;
  const nodes = graph.agents.map((agent, index) => {
    const { x, y } = agentPosition(index, count);
    // Names sit outside the circle, anchored on the side that faces away from it.
    const align = x > 0.3 ? 'left' : x < -0.3 ? 'right' : 'center';
    const baseline = y > 0.3 ? 'bottom' : y < -0.3 ? 'top' : 'middle';
    return { agent, x, y, labelX: x * NAME_RADIUS, labelY: y * NAME_RADIUS, align, baseline };
  });
  const edges = graph.edges.map((edge) => {
    const from = nodes[graph.agents.indexOf(edge.from)];
    const to = nodes[graph.agents.indexOf(edge.to)];
    const length = Math.hypot(to.x - from.x, to.y - from.y);
    const [ux, uy] = [(to.x - from.x) / length, (to.y - from.y) / length];
    // Right-hand normal of the direction (y points up in data space).
    const [nx, ny] = [uy, -ux];
    const x1 = from.x + ux * NODE_CLEARANCE + nx * EDGE_SHIFT;
    const y1 = from.y + uy * NODE_CLEARANCE + ny * EDGE_SHIFT;
    const x2 = to.x - ux * NODE_CLEARANCE + nx * EDGE_SHIFT;
    const y2 = to.y - uy * NODE_CLEARANCE + ny * EDGE_SHIFT;
    return {
      description: `${edge.from} → ${edge.to}: ${edge.count}`,
      count: edge.count,
      x1,
      y1,
      x2,
      y2,
      // Screen angle of the arrowhead, clockwise in degrees (screen y points down).
      angle: (-Math.atan2(uy, ux) * 180) / Math.PI,
      labelX: (x1 + x2) / 2 + nx * COUNT_SHIFT,
      labelY: (y1 + y2) / 2 + ny * COUNT_SHIFT,
    };
  });
  // Width 1 for one message up to 5 for the largest count (at least 4, so a graph of ones stays thin).
  const widthDomainTop = Math.max(4, ...graph.edges.map((edge) => edge.count));
  const position = (x: string, y: string): Record<string, unknown> => ({
    x: { field: x, type: 'quantitative', scale: { domain: [-X_EXTENT, X_EXTENT] }, axis: null },
    y: { field: y, type: 'quantitative', scale: { domain: [-Y_EXTENT, Y_EXTENT] }, axis: null },
  });
  return {
    width: 2 * X_EXTENT * PIXELS_PER_UNIT,
    height: 2 * Y_EXTENT * PIXELS_PER_UNIT,
    view: { stroke: null },
    layer: [
      {
        name: 'edges',
        data: { values: edges },
        mark: { type: 'rule', color: '#555', strokeCap: 'round' },
        encoding: {
          ...position('x1', 'y1'),
          x2: { field: 'x2' },
          y2: { field: 'y2' },
          strokeWidth: { field: 'count', type: 'quantitative', scale: { domain: [1, widthDomainTop], range: [1, 5] }, legend: null },
          description: { field: 'description', type: 'nominal' },
        },
      },
      {
        name: 'arrowheads',
        data: { values: edges },
        mark: { type: 'point', shape: 'triangle-right', filled: true, color: '#555', size: 70, opacity: 1 },
        encoding: { ...position('x2', 'y2'), angle: { field: 'angle', type: 'quantitative', scale: null } },
      },
      {
        name: 'counts',
        data: { values: edges.filter((edge) => edge.count > 1) },
        mark: { type: 'text', fontSize: 10, color: '#333' },
        encoding: { ...position('labelX', 'labelY'), text: { field: 'count', type: 'quantitative' } },
      },
      {
        name: 'nodes',
        data: { values: nodes },
        mark: { type: 'point', shape: 'circle', filled: true, size: 420, color: '#9ecae1', stroke: '#3182bd', strokeWidth: 1.5, opacity: 1 },
        encoding: { ...position('x', 'y'), description: { field: 'agent', type: 'nominal' } },
      },
      {
        name: 'names',
        data: { values: nodes },
        mark: { type: 'text', fontSize: 11, align: { expr: 'datum.align' }, baseline: { expr: 'datum.baseline' } },
        encoding: { ...position('labelX', 'labelY'), text: { field: 'agent', type: 'nominal' } },
      },
    ],
  };
}
