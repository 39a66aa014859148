// renderReport: one self-contained HTML file, written to test-output/report/index.html, opened in headless
// Chromium with JavaScript disabled: every plot is an inline SVG with one data mark per (policy, N)
// point, bar segment, curve, node or edge, nothing is loaded from the network, and a screenshot is saved.
// The Chromium is found where users have one (find-chromium.ts); without one the browser checks are
// skipped with a line saying so, except in CI, where a missing browser fails the run.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { renderReport } from '../../src/eval/report/index.js';
import { browserRequired, CHROMIUM_PLACES, findChromium } from './find-chromium.js';
import { REPORT_SIZES, reportComparisons, reportMessageGraphs, reportSummaries, reportTrainingMetrics } from './report-data.js';

const chromiumPath = findChromium();
if (chromiumPath === null) {
  if (browserRequired()) throw new Error(`report test: no Chromium found (looked at ${CHROMIUM_PLACES}); CI must run the browser checks`);
  console.warn(`report test: no Chromium found (looked at ${CHROMIUM_PLACES}); skipping the browser checks (install chromium, or set CHROME_PATH, to run them)`);
}

const OUTPUT = fileURLToPath(new URL('../../test-output/report/', import.meta.url));
const POLICIES = 2;
const POINTS = POLICIES * REPORT_SIZES.length;

let html: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const summaries = reportSummaries();
  html = await renderReport({
    title: 's³ test report',
    summaries,
    comparisons: reportComparisons(summaries),
    trainingMetrics: reportTrainingMetrics(),
    messageGraphs: reportMessageGraphs(),
  });
  await mkdir(OUTPUT, { recursive: true });
  await writeFile(join(OUTPUT, 'index.html'), html, 'utf8');
  if (chromiumPath === null) return;
  browser = await chromium.launch({
    executablePath: chromiumPath,
    // Playwright gives the browser a fresh temporary profile.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  await page.goto(pathToFileURL(join(OUTPUT, 'index.html')).href);
});

afterAll(async () => {
  await browser?.close();
});

// Number of elements matching `selector` inside the figure whose data-plot is `plot`.
function count(plot: string, selector: string): Promise<number> {
  return page.locator(`figure[data-plot="${plot}"] ${selector}`).count();
}

describe('renderReport', () => {
  it('is self-contained: no script, no external resource, no http(s) address', () => {
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
  });

  it('refuses a message graph edge to an unknown agent', async () => {
    const graph = { title: 'bad', agents: ['agent_1', 'agent_2'], edges: [{ from: 'agent_1', to: 'agent_9', count: 1 }] };
    await expect(renderReport({ summaries: [], messageGraphs: [graph] })).rejects.toThrow(ConfigError);
    await expect(renderReport({ summaries: [], messageGraphs: [graph] })).rejects.toThrow(/message graph "bad": edges\[0\] names agent "agent_9"/);
  });
});

describe.skipIf(chromiumPath === null)('renderReport in Chromium', () => {
  it('renders every plot as an inline SVG that Chromium lays out without JavaScript', async () => {
    const plots = await page.locator('figure[data-plot]').evaluateAll((figures) => figures.map((figure) => figure.getAttribute('data-plot')));
    expect(plots).toEqual([
      'aggregation-success',
      'aggregation-tokenEfficiency',
      'aggregation-tokens',
      'aggregation-structures',
      'exploration-success',
      'exploration-tokenEfficiency',
      'exploration-tokens',
      'exploration-roomOverlap',
      'exploration-successByExitDoor',
      'training',
      'message-graph-0',
      'message-graph-1',
    ]);
    for (const plot of plots) {
      const box = await page.locator(`figure[data-plot="${plot}"] > svg`).boundingBox();
      expect(box?.width, plot).toBeGreaterThan(200);
      expect(box?.height, plot).toBeGreaterThan(150);
    }
  });

  it('draws a point, an error bar and a line per policy for each metric against N', async () => {
    for (const task of ['aggregation', 'exploration']) {
      for (const metric of ['success', 'tokenEfficiency', 'tokens']) {
        const plot = `${task}-${metric}`;
        expect(await count(plot, 'g.points_marks > path'), plot).toBe(POINTS);
        expect(await count(plot, 'g.errorbars_layer_2_marks > line'), plot).toBe(POINTS);
        expect(await count(plot, 'g.lines_marks > path'), plot).toBe(POLICIES);
      }
    }
    // Legend entries name both policies of each task; the no-messaging condition is labelled as such.
    const legend = await page.locator('figure[data-plot="exploration-success"] g.role-legend-label text').allTextContents();
    expect(legend).toEqual(['s3', 's3 − communication']);
  });

  it('places each point at its mean: s3 aggregation success at N = 1 is 85%', async () => {
    const labels = await page.locator('figure[data-plot="aggregation-success"] g.points_marks > path').evaluateAll((paths) =>
      paths.map((path) => path.getAttribute('aria-label') ?? ''),
    );
    expect(labels).toHaveLength(POINTS);
    // The N = 1 point of s3: per-seed 0.85 + k·0.1 with deviations k summing to 0 → mean 0.85, shown as 85%.
    expect(labels.filter((label) => /^Team size N: 1; Success \(%\): 85; Policy: s3$/.test(label))).toHaveLength(1);
  });

  it('stacks four structure classes per policy and N, and plots room overlap and success by exit door', async () => {
    expect(await count('aggregation-structures', 'g.bars_marks > path')).toBe(POLICIES * REPORT_SIZES.length * 4);
    // Room overlap is undefined at N = 1 in this data, so each policy has points at N = 2, 4, 8 only.
    expect(await count('exploration-roomOverlap', 'g.points_marks > path')).toBe(POLICIES * 3);
    expect(await count('exploration-successByExitDoor', 'g.points_marks > path')).toBe(POLICIES * REPORT_SIZES.length * 3);
  });

  it('draws the paper\'s training figures (reward and success with a moving average, tokens, structure shares; constant ones left out) and the message graphs with every node and edge', async () => {
    const panels = await page.locator('figure[data-plot="training"] text').allTextContents();
    for (const title of ['Reward', 'Success', 'Tokens per team', 'Communication structure (share of teams)']) expect(panels).toContain(title);
    for (const title of ['IcePop-masked share of tokens', 'Read before sending own number', 'phase']) expect(panels).not.toContain(title);
    // Reward and success: the metric and its moving average; tokens: one line; structure: the four classes.
    expect(await count('training', 'g.curves_marks > path')).toBe(2 + 2 + 1 + 4);
    expect(await count('message-graph-0', 'g.nodes_marks > path')).toBe(4);
    expect(await count('message-graph-0', 'g.edges_marks > line')).toBe(5);
    expect(await count('message-graph-0', 'g.arrowheads_marks > path')).toBe(5);
    // Counts are written on the three edges with more than one message (3, 2 and 4).
    expect(await count('message-graph-0', 'g.counts_marks > text')).toBe(3);
    expect(await page.locator('figure[data-plot="message-graph-0"] g.counts_marks > text').allTextContents()).toEqual(['3', '2', '4']);
    expect(await count('message-graph-1', 'g.nodes_marks > path')).toBe(8);
    expect(await count('message-graph-1', 'g.edges_marks > line')).toBe(56);
    expect(await count('message-graph-1', 'g.counts_marks > text')).toBe(0);
    // Edge width: 1 + 4·(count − 1)/3 pixels for counts 3, 1, 2, 4, 1; every edge of a graph of ones is 1 pixel.
    const widths = (plot: string) =>
      page.locator(`figure[data-plot="${plot}"] g.edges_marks > line`).evaluateAll((lines) => lines.map((line) => Number(line.getAttribute('stroke-width'))));
    const expected = [3, 1, 2, 4, 1].map((edgeCount) => 1 + (4 * (edgeCount - 1)) / 3);
    (await widths('message-graph-0')).forEach((width, index) => expect(width).toBeCloseTo(expected[index], 6));
    expect(new Set(await widths('message-graph-1'))).toEqual(new Set([1]));
  });

  it('shows the metadata header and the comparison table', async () => {
    expect(await page.locator('h1').textContent()).toBe('s³ test report');
    expect(await page.locator('table.evaluations tbody tr').count()).toBe(4);
    const comparisonRows = await page.locator('table.comparisons tbody tr').count();
    // Aggregation: success and token efficiency at 4 sizes; exploration adds room overlap at N = 2, 4, 8.
    expect(comparisonRows).toBe(2 * 4 + (2 * 4 + 3));
    const firstRow = await page.locator('table.comparisons tbody tr').first().locator('td').allTextContents();
    expect(firstRow.slice(0, 4)).toEqual(['success N=1', 's3 vs. s3: individual reward', '1', 'Success (pp)']);
  });

  it('saves a full-page screenshot', async () => {
    const path = join(OUTPUT, 'screenshot.png');
    const image = await page.screenshot({ path, fullPage: true });
    expect(image.length).toBeGreaterThan(50_000);
  });
});
