// `swarm compare --family table9`: Table 9's Bonferroni families over evaluations given by role; a
// family's size counts every contrast of it, the ones whose evaluations are missing included.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { compareEvaluations, type Evaluation } from '../../src/eval/compare.js';
import type { MetricName } from '../../src/eval/summary.js';
import { parseTable9Role, table9Config, type Table9Role } from '../../src/eval/table9.js';
import { buildSummary } from './summary-builder.js';

const evaluation = (label: string, success: number[]): Evaluation => ({ label, summary: buildSummary({ name: label, sizes: { 4: { success } } }) });
const S3 = evaluation('runs/s3', [0.75, 0.75, 1]);
const INDIVIDUAL = evaluation('runs/individual', [0.25, 0.5, 0.25]);

const given = (role: Table9Role, e: Evaluation) => ({
  role,
  label: e.label,
  task: e.summary.task,
  has: (n: number, metric: MetricName) => e.summary.sizes[String(n)]?.[metric] !== undefined,
});

describe('table9Config', () => {
  it('runs the contrasts whose evaluations are given and corrects by the whole family', () => {
    const { config, skipped } = table9Config([given('s3', S3), given('individual', INDIVIDUAL)]);
    // Every summary has success, efficiency and reciprocity at N = 4 (required metrics); none has N = 6, 8 or 12.
    expect(config.families.map((f) => [f.name, f.comparisons.length, f.size])).toEqual([
      ['Abl. / agg. success N=4', 1, 2],
      ['Abl. / agg. efficiency N=4', 1, 2],
      ['Comm. / agg. reciprocity N=4', 1, 2],
    ]);
    // Online SFT is missing: its contrasts are left out but counted.
    expect(skipped.find((s) => s.family === 'Abl. / agg. success N=4')).toEqual({ family: 'Abl. / agg. success N=4', a: 's3', b: 'online-sft', reason: 'no aggregation evaluation for online-sft' });
    expect(skipped.find((s) => s.family === 'Scale / agg. success N=6' && s.b === 'individual')?.reason).toBe('success at N=6 not in both evaluations');
    const [comparison] = compareEvaluations({ evaluations: [S3, INDIVIDUAL], config }).filter((c) => c.metric === 'success');
    expect(comparison).toMatchObject({ family: 'Abl. / agg. success N=4', a: 'runs/s3', b: 'runs/individual', familySize: 2 });
    expect(comparison.pCorrected).toBeCloseTo(Math.min(1, 2 * comparison.p), 12);
  });

  it('refuses a role twice for one task, an unknown role, and no contrast at all', () => {
    expect(() => table9Config([given('s3', S3), given('s3', INDIVIDUAL)])).toThrow(/both runs\/s3 and runs\/individual are aggregation evaluations/);
    expect(() => parseTable9Role('teacher=runs/x')).toThrow(ConfigError);
    expect(parseTable9Role('no-comm=runs/a=b')).toEqual({ role: 'no-comm', dir: 'runs/a=b' });
    expect(() => table9Config([given('s3', S3)])).toThrow(/no contrast of Table 9 has both its evaluations/);
  });
});
