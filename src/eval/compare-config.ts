// The declarative comparison config of `swarm compare --config FILE`: named Bonferroni families, each a
// list of paired contrasts {a, b, n, metric} between evaluations named by label (or directory).
//
//   {"families": [{"name": "Abl. / expl. success N=4",
//                  "comparisons": [{"a": "runs/s3", "b": "runs/s3-no-comm", "n": 4, "metric": "success"}]}]}

import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import { METRIC_NAMES, TASK_METRIC_PREFIX, type ComparedMetric } from './summary.js';

/** One paired contrast: the effect is a − b on one metric at one team size. */
export interface ComparisonSpec {
  /** Label (or directory) of the first evaluation. */
  readonly a: string;
  /** Label (or directory) of the second evaluation. */
  readonly b: string;
  /** Team size N. */
  readonly n: number;
  /** The metric compared. */
  readonly metric: ComparedMetric;
}

/** A Bonferroni family: its contrasts are corrected together. */
export interface ComparisonFamily {
  /** Unique family name, shown in tables. */
  readonly name: string;
  /** The contrasts of the family. */
  readonly comparisons: readonly ComparisonSpec[];
  /** The family's size when it has contrasts not listed here (they still count in the correction); default the comparisons listed. */
  readonly size?: number;
}

/** Every comparison to run, by family. */
export interface CompareConfig {
  /** The families, in display order. */
  readonly families: readonly ComparisonFamily[];
}

/** A parsed config value and where it came from. */
export interface ParseCompareConfigOptions {
  /** The parsed JSON value. */
  readonly value: unknown;
  /** The file it was read from (named in every error). */
  readonly file: string;
}

function fail(file: string, field: string, value: unknown, expected: string): never {
  const shown = value === undefined ? 'missing' : JSON.stringify(value);
  throw new ConfigError(`${file}: field ${field} is ${shown}; expected ${expected}.`);
}

function fields(file: string, field: string, value: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(file, field, value, 'an object');
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new ConfigError(`${file}: unknown field ${field}.${key}; expected only: ${allowed.join(', ')}.`);
  }
  return value as Record<string, unknown>;
}

function nonEmptyString(file: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') fail(file, field, value, 'a non-empty string');
  return value;
}

/** Checks a parsed comparison config; throws ConfigError naming the file, field, value and what was expected. */
export function parseCompareConfig(options: ParseCompareConfigOptions): CompareConfig {
  const { file } = options;
  const root = fields(file, 'config', options.value, ['families']);
  if (!Array.isArray(root.families) || root.families.length === 0) fail(file, 'families', root.families, 'a non-empty array of families');
  const names = new Set<string>();
  const families = root.families.map((familyValue, familyIndex): ComparisonFamily => {
    const at = `families[${familyIndex}]`;
    const family = fields(file, at, familyValue, ['name', 'comparisons', 'size']);
    const name = nonEmptyString(file, `${at}.name`, family.name);
    if (names.has(name)) fail(file, `${at}.name`, name, 'a family name not used by an earlier family');
    names.add(name);
    if (!Array.isArray(family.comparisons) || family.comparisons.length === 0) {
      fail(file, `${at}.comparisons`, family.comparisons, 'a non-empty array of {a, b, n, metric}');
    }
    const comparisons = family.comparisons.map((comparisonValue, index): ComparisonSpec => {
      const cat = `${at}.comparisons[${index}]`;
      const comparison = fields(file, cat, comparisonValue, ['a', 'b', 'n', 'metric']);
      const a = nonEmptyString(file, `${cat}.a`, comparison.a);
      const b = nonEmptyString(file, `${cat}.b`, comparison.b);
      const n = comparison.n;
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) fail(file, `${cat}.n`, n, 'a team size, a positive integer');
      const metric = comparison.metric;
      const taskMetric = typeof metric === 'string' && metric.startsWith(TASK_METRIC_PREFIX) && /^[a-z][A-Za-z0-9]*$/.test(metric.slice(TASK_METRIC_PREFIX.length));
      if (typeof metric !== 'string' || !(taskMetric || (METRIC_NAMES as readonly string[]).includes(metric))) {
        fail(file, `${cat}.metric`, metric, `one of ${METRIC_NAMES.join(', ')}, or ${TASK_METRIC_PREFIX}NAME for a task's own metric`);
      }
      return { a, b, n, metric: metric as ComparedMetric };
    });
    if (family.size !== undefined && (typeof family.size !== 'number' || !Number.isSafeInteger(family.size) || family.size < comparisons.length)) {
      fail(file, `${at}.size`, family.size, `an integer ≥ the ${comparisons.length} comparisons listed`);
    }
    return { name, comparisons, ...(family.size === undefined ? {} : { size: family.size as number }) };
  });
  return { families };
}

/** Reads and checks a comparison config file; throws ConfigError when it is unreadable or malformed. */
export async function readCompareConfig(path: string): Promise<CompareConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${path}: cannot read the comparison config (${(error as Error).message}).`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: not valid JSON (${(error as Error).message}); expected {"families": [...]}.`);
  }
  return parseCompareConfig({ value, file: path });
}

/** The evaluation labels a config refers to, each once, in order of first use (what the caller must load). */
export function referencedEvaluations(config: CompareConfig): string[] {
  const labels = new Set<string>();
  for (const family of config.families) {
    for (const comparison of family.comparisons) {
      labels.add(comparison.a);
      labels.add(comparison.b);
    }
  }
  return [...labels];
}
