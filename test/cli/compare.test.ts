// `swarm compare` through the compiled CLI (run `npm run build` first when running this file alone) on
// two small scripted exploration evaluations, with and without messaging: the JSON contract
// {"comparisons": [...]}, the text table, --config families, and refusals.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const dataDir = mkdtempSync(path.join(tmpdir(), 's3-splits-'));
const run = (args: string[]) => spawnSync(process.execPath, [swarm, ...args], { encoding: 'utf8', env: { ...process.env, S3_DATA_DIR: dataDir } });
const root = mkdtempSync(path.join(tmpdir(), 's3-compare-cli-'));
const withMessages = path.join(root, 'comm');
const without = path.join(root, 'no-comm');

beforeAll(() => {
  const base = ['eval', '--policy', 'scripted', '--task', 'exploration', '--sizes', '2,4', '--seeds', '3', '--problems', '4', '--allowance', '3000'];
  for (const [out, extra] of [[withMessages, []], [without, ['--no-comm']]] as const) {
    const result = run([...base, ...extra, '--out', out]);
    if (result.status !== 0) throw new Error(`swarm eval failed: ${result.stderr}`);
  }
});

describe('swarm compare', () => {
  it('--family table9 runs the exploration families whose evaluations are given, counting the rest in each family size', () => {
    const result = run(['compare', '--family', 'table9', '--as', `s3=${withMessages}`, '--as', `no-comm=${without}`, '--json']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const { comparisons, skipped } = JSON.parse(result.stdout) as { comparisons: { family: string; metric: string; familySize: number; a: string; b: string }[]; skipped: { family: string; reason: string }[] };
    expect(comparisons.map((c) => [c.family, c.metric, c.familySize])).toEqual([
      ['Abl. / expl. success N=4', 'success', 3],
      ['Comm. / expl. overlap N=4', 'roomOverlap', 3],
    ]);
    expect(comparisons.every((c) => c.a === withMessages && c.b === without)).toBe(true);
    expect(skipped.some((s) => s.family === 'Train / expl. success N=4' && /no exploration evaluation for solo/.test(s.reason))).toBe(true);
    const text = run(['compare', '--family', 'table9', '--as', `s3=${withMessages}`, '--as', `no-comm=${without}`]);
    expect(text.stdout).toMatch(/not run:\n {2}Train \/ expl\. success N=4: s3 vs\. solo \(no exploration evaluation for solo; it still counts in its family's correction\)/);
    expect(run(['compare', '--family', 'table10']).stderr).toMatch(/--family must be table9/);
    expect(run(['compare', '--family', 'table9', '--as', `boss=${withMessages}`]).stderr).toMatch(/ROLE one of s3, solo/);
  });

  it('prints {"comparisons": [...]} with the contract fields for every pair, metric and common N', () => {
    const result = run(['compare', withMessages, without, '--json']);
    expect(result.status).toBe(0);
    const { comparisons } = JSON.parse(result.stdout);
    // success, tokenEfficiency and roomOverlap at N = 2 and 4: one contrast each, each its own family.
    expect(comparisons.map((c: { metric: string; n: number }) => `${c.metric}@${c.n}`)).toEqual([
      'success@2',
      'success@4',
      'tokenEfficiency@2',
      'tokenEfficiency@4',
      'roomOverlap@2',
      'roomOverlap@4',
    ]);
    for (const comparison of comparisons) {
      expect(comparison).toMatchObject({ a: withMessages, b: without, pairs: 3, df: 2, familySize: 1 });
      for (const field of ['meanDiff', 'se', 't', 'p', 'pCorrected', 'dz']) expect(field in comparison, field).toBe(true);
      expect(comparison.pCorrected).toBe(comparison.p);
    }
  });

  it('prints a table like the paper’s Table 9 by default', () => {
    const result = run(['compare', withMessages, without]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Family\s+Contrast\s+N\s+Metric\s+Effect ± SE\s+d_z\s+t \(df\)\s+p\s+p \(Bonf\.\)\s+Before\s+After/);
    expect(result.stdout).toContain(`${withMessages} vs. ${without}`);
    expect(result.stdout).toMatch(/Room overlap/);
  });

  it('compares an evaluation with itself (the contract check does) with undefined statistics as null', () => {
    const { comparisons } = JSON.parse(run(['compare', withMessages, withMessages, '--json']).stdout);
    expect(comparisons[0]).toMatchObject({ meanDiff: 0, t: null, p: null, dz: null });
  });

  it('runs the families of --config, loading the evaluations it names', () => {
    const config = path.join(root, 'families.json');
    writeFileSync(
      config,
      JSON.stringify({
        families: [
          {
            name: 'messages vs none',
            comparisons: [
              { a: withMessages, b: without, n: 2, metric: 'success' },
              { a: withMessages, b: without, n: 4, metric: 'success' },
            ],
          },
        ],
      }),
    );
    const { comparisons } = JSON.parse(run(['compare', '--config', config, '--json']).stdout);
    expect(comparisons).toHaveLength(2);
    for (const comparison of comparisons) {
      expect(comparison).toMatchObject({ family: 'messages vs none', familySize: 2 });
      if (comparison.p !== null) expect(comparison.pCorrected).toBeCloseTo(Math.min(1, 2 * comparison.p), 12);
    }
  });

  it('refuses fewer than two evaluations and a directory without summary.json', () => {
    expect(run(['compare', withMessages]).stderr).toMatch(/^swarm: swarm compare needs at least two evaluation directories; got 1/);
    const empty = mkdtempSync(path.join(tmpdir(), 's3-empty-'));
    expect(run(['compare', withMessages, empty]).stderr).toMatch(/holds no summary\.json, and none of its subfolders does/);
  });
});
