// Renders a Vega-Lite spec to an SVG string in Node: vega-lite compiles it to Vega, vega renders it
// headless (renderer "none") to SVG. The namespace attributes are dropped, since inline SVG in HTML
// needs none, so the report holds no http(s) address at all.

import { compile, type TopLevelSpec } from 'vega-lite';
import { parse, View } from 'vega';

// Offline-safe look shared by every plot: generic font family, white background.
const REPORT_CONFIG = {
  font: 'sans-serif',
  background: 'white',
  title: { fontSize: 13, anchor: 'start' },
  axis: { labelFontSize: 11, titleFontSize: 11 },
  legend: { labelFontSize: 11, titleFontSize: 11, labelLimit: 260 },
} as const;

/** A Vega-Lite spec as plain JSON (built by the plot modules; vega-lite checks it when compiling). */
export type VegaLiteSpec = Readonly<Record<string, unknown>>;

/** Compiles a Vega-Lite spec and renders it to an SVG string (no xmlns attributes). */
export async function renderVegaLiteSvg(spec: VegaLiteSpec): Promise<string> {
  const vegaSpec = compile({ ...spec, config: REPORT_CONFIG } as unknown as TopLevelSpec).spec;
  const view = new View(parse(vegaSpec), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    return svg.replace(/ xmlns(:xlink)?="[^"]*"/g, '');
  } finally {
    view.finalize();
  }
}
