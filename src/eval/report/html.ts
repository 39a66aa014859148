// HTML building blocks of the report: escaping, one figure (a heading, an inline SVG and a caption),
// and the self-contained page (inline CSS, generic font families, no script, no external resource).

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** One plot of the report. */
export interface FigureOptions {
  /** Identifier, written as data-plot (tests and readers find plots by it). */
  readonly id: string;
  /** Heading above the plot. */
  readonly title: string;
  /** The rendered SVG. */
  readonly svg: string;
  /** What the plot shows and how to read it. */
  readonly caption: string;
}

/** A <figure> holding a titled inline SVG and its caption. */
export function figureHtml(options: FigureOptions): string {
  return [
    `<figure data-plot="${escapeHtml(options.id)}">`,
    `<h3>${escapeHtml(options.title)}</h3>`,
    options.svg,
    `<figcaption>${escapeHtml(options.caption)}</figcaption>`,
    '</figure>',
  ].join('\n');
}

/** A titled part of the page. */
export interface SectionOptions {
  /** Heading of the section (or the page title). */
  readonly title: string;
  /** HTML fragments, in order. */
  readonly body: readonly string[];
}

/** A titled report section of figures; empty string when it has no content. */
export function sectionHtml(options: SectionOptions): string {
  if (options.body.length === 0) return '';
  return [`<section>`, `<h2>${escapeHtml(options.title)}</h2>`, `<div class="figures">`, ...options.body, `</div>`, `</section>`].join('\n');
}

const STYLE = `
body { font-family: sans-serif; color: #222; margin: 24px; max-width: 1400px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; border-bottom: 1px solid #ccc; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 14px; margin: 0 0 6px; }
.figures { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
figure { margin: 0; }
figcaption { font-size: 12px; color: #555; max-width: 520px; margin-top: 4px; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.muted { color: #666; font-size: 12px; }
`;

/** A complete, self-contained HTML document. */
export function pageHtml(options: SectionOptions): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${escapeHtml(options.title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    ...options.body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
