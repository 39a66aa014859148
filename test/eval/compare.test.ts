// Paired comparisons: config validation, the default config, refusal of non-comparable evaluations, the
// statistics of each contrast with Bonferroni families, and the JSON and text outputs.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseCompareConfig, readCompareConfig, referencedEvaluations } from '../../src/eval/compare-config.js';
import { compareEvaluations, defaultCompareConfig, type Evaluation } from '../../src/eval/compare.js';
import { comparisonsJson, formatComparisonTable } from '../../src/eval/comparison-table.js';
import { buildSummary } from './summary-builder.js';

// Success per seed: differences 0.25, 0.25, 0.125 → mean 5/24, sd = sqrt(1/192), se = 1/24, t = 5 with
// 2 df, so p = 1 − 5/sqrt(27) (the closed form of the t cdf with 2 df) and d_z = 5/sqrt(3).
const S3: Evaluation = {
  label: 'runs/s3',
  summary: buildSummary({
    name: 's3',
    sizes: { 2: { success: [0.5, 0.75, 0.625], centralization: [0.2, Number.NaN, 0.6] }, 4: { success: [0.75, 0.75, 1] } },
  }),
};
const INDIVIDUAL: Evaluation = {
  label: 'runs/individual',
  summary: buildSummary({
    name: 'individual',
    sizes: { 2: { success: [0.25, 0.5, 0.5], centralization: [0.1, 0.3, 0.2] }, 8: { success: [0, 0.25, 0] }, 4: { success: [0.25, 0.5, 0.25] } },
  }),
};
const SFT: Evaluation = { label: 'runs/sft', summary: buildSummary({ name: 'sft', sizes: { 2: { success: [0.5, 0.5, 0.25] }, 4: { success: [0.5, 0.5, 0.5] } } }) };

function parse(value: unknown) {
  return parseCompareConfig({ value, file: 'compare.json' });
}

describe('parseCompareConfig', () => {
  const valid = { families: [{ name: 'Abl. N=2', comparisons: [{ a: 'runs/s3', b: 'runs/individual', n: 2, metric: 'success' }] }] };

  it('accepts families of {a, b, n, metric} and lists the evaluations they use', () => {
    const config = parse({
      families: [...valid.families, { name: 'Scale', comparisons: [{ a: 'runs/s3', b: 'runs/sft', n: 4, metric: 'reciprocity' }] }],
    });
    expect(config.families.map((family) => family.name)).toEqual(['Abl. N=2', 'Scale']);
    expect(referencedEvaluations(config)).toEqual(['runs/s3', 'runs/individual', 'runs/sft']);
  });

  it('names the file, the field, the value and what was expected', () => {
    const bad = (comparison: Record<string, unknown>) => parse({ families: [{ name: 'F', comparisons: [comparison] }] });
    expect(() => bad({ a: 'x', b: 'y', n: 0, metric: 'success' })).toThrow(/compare\.json: field families\[0\]\.comparisons\[0\]\.n is 0; expected a team size/);
    expect(() => bad({ a: 'x', b: 'y', n: '4', metric: 'success' })).toThrow(/\.n is "4"/);
    expect(() => bad({ a: 'x', b: 'y', n: 2.5, metric: 'success' })).toThrow(/\.n is 2\.5/);
    expect(() => bad({ a: 'x', b: 'y', n: 4, metric: 'sucess' })).toThrow(/\.metric is "sucess"; expected one of success, tokens/);
    expect(() => bad({ a: '', b: 'y', n: 4, metric: 'success' })).toThrow(/\.a is ""; expected a non-empty string/);
    expect(() => bad({ a: 'x', b: 'y', n: 4, metric: 'success', alpha: 0.01 })).toThrow(/unknown field families\[0\]\.comparisons\[0\]\.alpha/);
    expect(() => parse({})).toThrow(/field families is missing; expected a non-empty array/);
    expect(() => parse({ families: [] })).toThrow(ConfigError);
    expect(() => parse({ families: [{ name: 'F', comparisons: [] }] })).toThrow(/families\[0\]\.comparisons is \[\]/);
    expect(() => parse({ families: [valid.families[0], valid.families[0]] })).toThrow(/families\[1\]\.name is "Abl\. N=2"; expected a family name not used/);
  });

  it('reads a config file and names it when it is not JSON', async () => {
    const directory = await mkdtemp(join(tmpdir(), 's3-compare-'));
    const good = join(directory, 'good.json');
    await writeFile(good, JSON.stringify(valid), 'utf8');
    expect((await readCompareConfig(good)).families[0].comparisons[0].n).toBe(2);
    const broken = join(directory, 'broken.json');
    await writeFile(broken, '{families', 'utf8');
    await expect(readCompareConfig(broken)).rejects.toThrow(/broken\.json: not valid JSON/);
  });
});

describe('defaultCompareConfig', () => {
  it('compares each pair at each common N on success and token efficiency, one family per (metric, N)', () => {
    const config = defaultCompareConfig([S3, INDIVIDUAL]);
    expect(config.families.map((family) => family.name)).toEqual(['success N=2', 'success N=4', 'tokenEfficiency N=2', 'tokenEfficiency N=4']);
    expect(config.families[1].comparisons).toEqual([{ a: 'runs/s3', b: 'runs/individual', n: 4, metric: 'success' }]);
  });

  it('puts every pair of three evaluations in the same family and adds room overlap for exploration', () => {
    const config = defaultCompareConfig([S3, INDIVIDUAL, SFT]);
    expect(config.families[0].comparisons.map((c) => `${c.a}|${c.b}`)).toEqual(['runs/s3|runs/individual', 'runs/s3|runs/sft', 'runs/individual|runs/sft']);
    const explorer = (label: string): Evaluation => ({ label, summary: buildSummary({ name: label, task: 'exploration', sizes: { 4: {} } }) });
    expect(defaultCompareConfig([explorer('a'), explorer('b')]).families.map((family) => family.name)).toEqual([
      'success N=4',
      'tokenEfficiency N=4',
      'roomOverlap N=4',
    ]);
  });

  it('leaves out a contrast where fewer than two seeds define the metric in both', () => {
    const explorer = (label: string): Evaluation => ({
      label,
      summary: buildSummary({ name: label, task: 'exploration', sizes: { 1: { roomOverlap: [Number.NaN, 0, Number.NaN] }, 2: { roomOverlap: [0.5, 0.25, 0.5] } } }),
    });
    const names = defaultCompareConfig([explorer('a'), explorer('b')]).families.map((family) => family.name);
    expect(names).toEqual(['success N=1', 'success N=2', 'tokenEfficiency N=1', 'tokenEfficiency N=2', 'roomOverlap N=2']);
  });

  it('needs two evaluations with a common team size', () => {
    expect(() => defaultCompareConfig([S3])).toThrow(/at least two evaluations; got 1/);
    const other: Evaluation = { label: 'runs/big', summary: buildSummary({ name: 'big', sizes: { 16: {} } }) };
    expect(() => defaultCompareConfig([S3, other])).toThrow(/no common team size \(runs\/s3: 2, 4; runs\/big: 16\)/);
  });
});

describe('compareEvaluations', () => {
  it('runs a paired t-test per contrast with d_z and hand-computed values', () => {
    const [success2] = compareEvaluations({ evaluations: [S3, INDIVIDUAL] });
    expect(success2).toMatchObject({ family: 'success N=2', a: 'runs/s3', b: 'runs/individual', n: 2, metric: 'success', pairs: 3, df: 2, familySize: 1 });
    expect(success2.meanDiff).toBeCloseTo(5 / 24, 12);
    expect(success2.se).toBeCloseTo(1 / 24, 12);
    expect(success2.t).toBeCloseTo(5, 10);
    expect(success2.p).toBeCloseTo(1 - 5 / Math.sqrt(27), 9);
    expect(success2.pCorrected).toBe(success2.p);
    expect(success2.dz).toBeCloseTo(5 / Math.sqrt(3), 10);
  });

  it('corrects within families by the number of contrasts in each', () => {
    const comparisons = compareEvaluations({ evaluations: [S3, INDIVIDUAL, SFT] });
    const success2 = comparisons.filter((c) => c.family === 'success N=2');
    expect(success2).toHaveLength(3);
    for (const c of success2) {
      expect(c.familySize).toBe(3);
      expect(c.pCorrected).toBeCloseTo(Math.min(1, 3 * c.p), 15);
    }
  });

  it('pairs only seeds where both define the metric', () => {
    const config = parse({ families: [{ name: 'Comm.', comparisons: [{ a: 'runs/s3', b: 'runs/individual', n: 2, metric: 'centralization' }] }] });
    const [result] = compareEvaluations({ evaluations: [S3, INDIVIDUAL], config });
    // Seeds 1 and 3: differences 0.1 and 0.4 → mean 0.25, sd = 0.15·sqrt(2), t = 0.25/0.15 with 1 df.
    expect(result.pairs).toBe(2);
    expect(result.meanDiff).toBeCloseTo(0.25, 12);
    expect(result.t).toBeCloseTo(0.25 / 0.15, 10);
    expect(result.p).toBeCloseTo(1 - (2 / Math.PI) * Math.atan(0.25 / 0.15), 9);
  });

  it('refuses evaluations of another task, other seeds or other problems', () => {
    const exploration: Evaluation = { label: 'runs/explore', summary: buildSummary({ name: 'x', task: 'exploration', sizes: { 2: {} } }) };
    expect(() => compareEvaluations({ evaluations: [S3, exploration] })).toThrow(ConfigError);
    expect(() => compareEvaluations({ evaluations: [S3, exploration] })).toThrow(
      /Cannot compare "runs\/s3" with "runs\/explore": task "aggregation" vs "exploration"; a paired test needs the same task, problems and seeds/,
    );
    const seeds: Evaluation = { label: 'runs/seeds', summary: buildSummary({ name: 'y', seeds: [4, 5, 6], sizes: { 2: {} } }) };
    expect(() => compareEvaluations({ evaluations: [S3, seeds] })).toThrow(/seeds \[1, 2, 3\] vs \[4, 5, 6\]/);
    const problems: Evaluation = { label: 'runs/problems', summary: buildSummary({ name: 'z', problemIds: ['p/0', 'p/1', 'p/9', 'p/3'], sizes: { 2: {} } }) };
    expect(() => compareEvaluations({ evaluations: [S3, problems] })).toThrow(/problem 2 is "p\/2" vs "p\/9"/);
  });

  it('names unknown labels, missing sizes and missing metrics', () => {
    const config = (a: string, n: number, metric: string) => parse({ families: [{ name: 'F', comparisons: [{ a, b: 'runs/individual', n, metric }] }] });
    expect(() => compareEvaluations({ evaluations: [S3, INDIVIDUAL], config: config('runs/solo', 2, 'success') })).toThrow(
      /families\[0\]\.comparisons\[0\]\.a names "runs\/solo", which is not among the evaluations given: runs\/s3, runs\/individual/,
    );
    expect(() => compareEvaluations({ evaluations: [S3, INDIVIDUAL], config: config('runs/s3', 8, 'success') })).toThrow(/"runs\/s3" has no results at N=8 \(sizes: 2, 4\)/);
    expect(() => compareEvaluations({ evaluations: [S3, INDIVIDUAL], config: config('runs/s3', 2, 'sendGini') })).toThrow(/"runs\/s3" has no metric "sendGini" at N=2/);
  });

  it('compares an evaluation with itself: zero differences give NaN statistics, written as null', () => {
    const comparisons = compareEvaluations({ evaluations: [S3, S3] });
    expect(comparisons[0].meanDiff).toBe(0);
    expect(comparisons[0].t).toBeNaN();
    const json = comparisonsJson(comparisons);
    expect(json.comparisons[0]).toMatchObject({ meanDiff: 0, se: 0, t: null, p: null, pCorrected: null, dz: null, df: 2 });
    expect(JSON.parse(JSON.stringify(json)).comparisons).toHaveLength(comparisons.length);
  });

  it('refuses two different evaluations under one label', () => {
    const twin: Evaluation = { label: 'runs/s3', summary: INDIVIDUAL.summary };
    expect(() => compareEvaluations({ evaluations: [S3, twin] })).toThrow(/Two different evaluations are labelled "runs\/s3"/);
  });
});

describe('formatComparisonTable', () => {
  it('shows effects ± SE (success in percentage points), d_z and significance before/after correction', () => {
    const comparisons = compareEvaluations({ evaluations: [S3, INDIVIDUAL, SFT] });
    const table = formatComparisonTable(comparisons);
    const lines = table.split('\n');
    expect(lines[0]).toMatch(/^Family\s+Contrast\s+N\s+Metric\s+Effect ± SE\s+d_z\s+t \(df\)\s+p\s+p \(Bonf\.\)\s+Before\s+After$/);
    expect(lines[1]).toMatch(/^-+( +-+)+$/);
    // s3 vs individual at N=2: 20.83 ± 4.17 pp, d_z = 2.89, t = 5 (2 df), p = 0.0377 → Yes; corrected 3p = 0.113 → No.
    const row = lines.find((line) => line.startsWith('success N=2') && line.includes('runs/s3 vs. runs/individual'));
    expect(row).toMatch(/Success \(pp\)\s+20\.83 ± 4\.17\s+2\.89\s+5\.00 \(2\)\s+0\.0377\s+0\.1132\s+Yes\s+No \(3\)$/);
    expect(table).toContain('Effects are a − b (success in percentage points)');
  });

  it('prints undefined statistics as a dash', () => {
    const table = formatComparisonTable(compareEvaluations({ evaluations: [S3, S3] }));
    expect(table.split('\n')[2]).toMatch(/0\.00 ± 0\.00\s+—\s+— \(2\)\s+—\s+—\s+No\s+No \(1\)$/);
  });
});
