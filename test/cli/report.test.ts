// `swarm report` through the compiled CLI (run `npm run build` first when running this file alone): a
// folder of scripted exploration evaluations with and without messaging becomes one self-contained HTML
// page with the plots against N, the paired comparisons of the two, and a sample message graph.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const dataDir = mkdtempSync(path.join(tmpdir(), 's3-splits-'));
const run = (args: string[]) => spawnSync(process.execPath, [swarm, ...args], { encoding: 'utf8', env: { ...process.env, S3_DATA_DIR: dataDir } });
const root = mkdtempSync(path.join(tmpdir(), 's3-report-cli-'));

beforeAll(() => {
  const base = ['eval', '--policy', 'scripted', '--task', 'exploration', '--sizes', '1,2,4,8', '--seeds', '2', '--problems', '3', '--allowance', '3000'];
  for (const [name, extra] of [['comm', []], ['no-comm', ['--no-comm']]] as const) {
    const result = run([...base, ...extra, '--out', path.join(root, name)]);
    if (result.status !== 0) throw new Error(`swarm eval failed: ${result.stderr}`);
  }
});

describe('swarm report', () => {
  it('writes <first dir>/report.html from a folder of evaluations and prints its path', () => {
    const result = run(['report', root]);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`${path.join(root, 'report.html')}\n`);
    const html = readFileSync(path.join(root, 'report.html'), 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).not.toMatch(/<script|https?:\/\//);
    for (const plot of ['exploration-success', 'exploration-tokenEfficiency', 'exploration-roomOverlap', 'exploration-successByExitDoor', 'message-graph-0']) {
      expect(html).toContain(`data-plot="${plot}"`);
    }
    // Only the messaging evaluation has a message graph: at its largest size up to 4, first seed.
    expect(html).not.toContain('data-plot="message-graph-1"');
    expect(html).toMatch(/scripted \(messaging\): exploration N=4, seed 1, problem exploration-d3\/eval\/\d+/);
    // The two are compared on success, efficiency and overlap at each N (overlap is 0 for both at N = 1).
    expect(html).toContain('scripted (messaging) vs. scripted (no messaging)');
    expect(html).toContain('exploration: success N=2');
    expect(html).toContain('exploration: roomOverlap N=4');
  });

  it('writes to --out and accepts evaluation directories one by one', () => {
    const out = path.join(root, 'pages', 'one.html');
    const result = run(['report', path.join(root, 'comm'), '--out', out]);
    expect(result.status).toBe(0);
    expect(existsSync(out)).toBe(true);
    expect(readFileSync(out, 'utf8')).not.toContain('Paired comparisons');
  });

  it('refuses a folder without evaluations', () => {
    const result = run(['report', mkdtempSync(path.join(tmpdir(), 's3-empty-'))]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/holds no summary\.json/);
  });
});
