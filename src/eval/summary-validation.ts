// Checks a parsed summary.json against the schemaVersion 1 format of summary.ts: every field's type,
// no unknown fields, required metrics present, per-seed lists aligned with the seeds, and mean, SE and
// count consistent with the per-seed values. Each failure is a FormatError naming the file and field.

import { ConfigError, FormatError } from '../errors.js';
import { MESSAGE_PERTURBATION_HELP, parseMessagePerturbation } from '../harness/message-channel.js';
import { SPLITS } from '../tasks/task.js';
import { aggregateSeeds } from './seed-aggregate.js';
import {
  EXPLORATION_METRICS,
  isExplorationTask,
  METRIC_INFO,
  METRIC_NAMES,
  REQUIRED_METRICS,
  STRUCTURE_CLASSES,
  SUMMARY_SCHEMA_VERSION,
  type MetricInfo,
  type MetricName,
  type MetricRange,
  type MetricSummary,
  type SizeSummary,
  type Summary,
} from './summary.js';

/** What to validate and where it came from. */
export interface ValidateSummaryOptions {
  /** The parsed JSON value. */
  readonly value: unknown;
  /** The file it was read from (named in every error). */
  readonly file: string;
}

const TOP_LEVEL_FIELDS = [
  'schemaVersion',
  'task',
  'policy',
  'comm',
  'seeds',
  'problems',
  'allowance',
  'temperature',
  'messages',
  'thinking',
  'taskMetrics',
  'createdAt',
  'packageVersion',
  'sizes',
];
const SIZE_GROUPS = ['structures', 'successByExitDoor', 'taskMetrics'];
// Relative tolerance of the recomputed mean and SE (written values may be rounded by hand-made files).
const CONSISTENCY_TOLERANCE = 1e-6;

type Fields = Record<string, unknown>;

class SummaryChecker {
  constructor(private readonly file: string) {}

  fail(field: string, value: unknown, expected: string): never {
    const shown = value === undefined ? 'missing' : `${truncate(JSON.stringify(value))}`;
    throw new FormatError(`${this.file}: field ${field} is ${shown}; expected ${expected}.`);
  }

  object(value: unknown, field: string, allowed: readonly string[] | null): Fields {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(field, value, 'an object');
    const fields = value as Fields;
    if (allowed !== null) {
      for (const key of Object.keys(fields)) {
        if (!allowed.includes(key)) {
          throw new FormatError(`${this.file}: unknown field ${join(field, key)}; expected only: ${allowed.join(', ')}.`);
        }
      }
    }
    return fields;
  }

  string(value: unknown, field: string): string {
    if (typeof value !== 'string' || value === '') this.fail(field, value, 'a non-empty string');
    return value;
  }

  integer(value: unknown, field: string, minimum: number): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) this.fail(field, value, `an integer ≥ ${minimum}`);
    return value;
  }

  finite(value: unknown, field: string, range: MetricRange | null): number {
    const bounds = range === 'fraction' ? 'a number in [0, 1]' : range === 'nonNegative' ? 'a number ≥ 0' : 'a finite number';
    if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(field, value, bounds);
    if ((range !== null && value < 0) || (range === 'fraction' && value > 1)) this.fail(field, value, bounds);
    return value;
  }

  metric(value: unknown, field: string, range: MetricRange | null, seedCount: number): MetricSummary {
    const fields = this.object(value, field, ['mean', 'se', 'count', 'perSeed']);
    const perSeed = fields.perSeed;
    if (!Array.isArray(perSeed) || perSeed.length !== seedCount) {
      this.fail(`${field}.perSeed`, perSeed, `an array of ${seedCount} entries, one per seed`);
    }
    const values = perSeed.map((entry, index) => (entry === null ? Number.NaN : this.finite(entry, `${field}.perSeed[${index}]`, range)));
    const expected = aggregateSeeds(values);
    if (fields.count !== expected.count) this.fail(`${field}.count`, fields.count, `${expected.count}, the number of non-null perSeed entries`);
    this.consistent(fields.mean, expected.mean, `${field}.mean`, 'the mean of the non-null perSeed entries');
    this.consistent(fields.se, expected.se, `${field}.se`, 'sd/sqrt(count) of the non-null perSeed entries');
    return expected;
  }

  consistent(value: unknown, expected: number | null, field: string, what: string): void {
    if (expected === null) {
      if (value !== null) this.fail(field, value, `null (${what} is undefined)`);
      return;
    }
    const ok = typeof value === 'number' && Math.abs(value - expected) <= CONSISTENCY_TOLERANCE * Math.max(1, Math.abs(expected));
    if (!ok) this.fail(field, value, `${expected} (${what})`);
  }

  size(value: unknown, field: string, task: string, seedCount: number, declared: Readonly<Record<string, MetricInfo>>): SizeSummary {
    const fields = this.object(value, field, [...METRIC_NAMES, ...SIZE_GROUPS]);
    const required: readonly MetricName[] = isExplorationTask(task) ? [...REQUIRED_METRICS, ...EXPLORATION_METRICS] : REQUIRED_METRICS;
    const size: Record<string, unknown> = {};
    for (const name of METRIC_NAMES) {
      if (fields[name] === undefined) {
        if (required.includes(name)) this.fail(join(field, name), undefined, `a metric summary {mean, se, count, perSeed} (required for task "${task}")`);
        continue;
      }
      size[name] = this.metric(fields[name], join(field, name), METRIC_INFO[name].range, seedCount);
    }
    if (fields.structures !== undefined) {
      const structures = this.object(fields.structures, join(field, 'structures'), STRUCTURE_CLASSES);
      const checked: Record<string, MetricSummary> = {};
      for (const name of STRUCTURE_CLASSES) {
        checked[name] = this.metric(structures[name], join(join(field, 'structures'), name), 'fraction', seedCount);
      }
      size.structures = checked;
    }
    if (fields.successByExitDoor !== undefined) {
      const doorsField = join(field, 'successByExitDoor');
      const doors = this.object(fields.successByExitDoor, doorsField, null);
      const checked: Record<string, MetricSummary> = {};
      for (const door of Object.keys(doors)) {
        if (!/^(0|[1-9]\d*)$/.test(door)) this.fail(`${doorsField} key ${JSON.stringify(door)}`, door, 'a door index "0", "1", ...');
        checked[door] = this.metric(doors[door], join(doorsField, door), 'fraction', seedCount);
      }
      size.successByExitDoor = checked;
    }
    if (fields.taskMetrics !== undefined) {
      const ownField = join(field, 'taskMetrics');
      const own = this.object(fields.taskMetrics, ownField, null);
      const checked: Record<string, MetricSummary> = {};
      for (const name of Object.keys(own)) {
        const info = declared[name];
        if (info === undefined) this.fail(`${ownField} key ${JSON.stringify(name)}`, name, `a task metric declared in the top-level taskMetrics (${Object.keys(declared).join(', ') || 'none declared'})`);
        checked[name] = this.metric(own[name], join(ownField, name), info.range, seedCount);
      }
      size.taskMetrics = checked;
    }
    return size as SizeSummary;
  }

  taskMetricInfo(value: unknown): Record<string, MetricInfo> {
    const declared = this.object(value, 'taskMetrics', null);
    const infos: Record<string, MetricInfo> = {};
    for (const name of Object.keys(declared)) {
      const field = join('taskMetrics', name);
      if (!/^[a-z][A-Za-z0-9]*$/.test(name)) this.fail(`taskMetrics key ${JSON.stringify(name)}`, name, 'a camelCase metric name');
      const info = this.object(declared[name], field, ['label', 'range', 'percent']);
      const label = this.string(info.label, `${field}.label`);
      if (info.range !== 'fraction' && info.range !== 'nonNegative') this.fail(`${field}.range`, info.range, '"fraction" or "nonNegative"');
      if (typeof info.percent !== 'boolean' || (info.percent && info.range !== 'fraction')) this.fail(`${field}.percent`, info.percent, 'a boolean, true only for a fraction');
      infos[name] = { label, range: info.range, percent: info.percent };
    }
    return infos;
  }

  summary(value: unknown): Summary {
    const fields = this.object(value, 'summary', TOP_LEVEL_FIELDS);
    if (fields.schemaVersion !== SUMMARY_SCHEMA_VERSION) this.fail('schemaVersion', fields.schemaVersion, `${SUMMARY_SCHEMA_VERSION}`);
    const task = this.string(fields.task, 'task');

    const policyFields = this.object(fields.policy, 'policy', ['name', 'description', 'model']);
    const policy = {
      name: this.string(policyFields.name, 'policy.name'),
      description: typeof policyFields.description === 'string' ? policyFields.description : this.fail('policy.description', policyFields.description, 'a string'),
      model: policyFields.model === null ? null : this.string(policyFields.model, 'policy.model'),
    };
    if (typeof fields.comm !== 'boolean') this.fail('comm', fields.comm, 'true or false (whether messaging was on)');

    if (!Array.isArray(fields.seeds) || fields.seeds.length === 0) this.fail('seeds', fields.seeds, 'a non-empty array of seeds');
    const seeds = fields.seeds.map((seed, index) => this.integer(seed, `seeds[${index}]`, 0));
    if (new Set(seeds).size !== seeds.length) this.fail('seeds', seeds, 'distinct seeds');

    const problemFields = this.object(fields.problems, 'problems', ['split', 'count', 'ids']);
    const split = problemFields.split;
    if (!SPLITS.some((name) => name === split)) this.fail('problems.split', split, `one of ${SPLITS.join(', ')}`);
    const count = this.integer(problemFields.count, 'problems.count', 1);
    if (!Array.isArray(problemFields.ids) || problemFields.ids.length !== count) {
      this.fail('problems.ids', problemFields.ids, `an array of problems.count = ${count} problem ids`);
    }
    const ids = problemFields.ids.map((id, index) => this.string(id, `problems.ids[${index}]`));

    const allowanceFields = this.object(fields.allowance, 'allowance', ['tokensPerAgent', 'finalAnswerTokens']);
    const allowance = {
      tokensPerAgent: this.integer(allowanceFields.tokensPerAgent, 'allowance.tokensPerAgent', 1),
      finalAnswerTokens: this.integer(allowanceFields.finalAnswerTokens, 'allowance.finalAnswerTokens', 0),
    };
    const temperature = this.finite(fields.temperature, 'temperature', 'nonNegative');
    let messages: string | undefined;
    if (fields.messages !== undefined) {
      messages = this.string(fields.messages, 'messages');
      try {
        if (parseMessagePerturbation(messages).kind === 'none') this.fail('messages', messages, 'absent for the intact channel');
      } catch (error) {
        if (error instanceof ConfigError) this.fail('messages', messages, MESSAGE_PERTURBATION_HELP.replace('none | ', ''));
        throw error;
      }
    }
    if (fields.thinking !== undefined && fields.thinking !== false) this.fail('thinking', fields.thinking, 'false (thinking mode off), or absent when on');
    const taskMetrics = fields.taskMetrics === undefined ? undefined : this.taskMetricInfo(fields.taskMetrics);
    const createdAt = this.string(fields.createdAt, 'createdAt');
    if (Number.isNaN(Date.parse(createdAt))) this.fail('createdAt', createdAt, 'an ISO 8601 time, e.g. "2025-01-31T12:00:00.000Z"');
    const packageVersion = this.string(fields.packageVersion, 'packageVersion');

    const sizeFields = this.object(fields.sizes, 'sizes', null);
    if (Object.keys(sizeFields).length === 0) this.fail('sizes', sizeFields, 'at least one team size');
    const sizes: Record<string, SizeSummary> = {};
    for (const key of Object.keys(sizeFields)) {
      if (!/^[1-9]\d*$/.test(key)) this.fail(`sizes key ${JSON.stringify(key)}`, key, 'a team size written as a positive integer, e.g. "4"');
      sizes[key] = this.size(sizeFields[key], join('sizes', key), task, seeds.length, taskMetrics ?? {});
    }

    return {
      schemaVersion: SUMMARY_SCHEMA_VERSION,
      task,
      policy,
      comm: fields.comm,
      seeds,
      problems: { split: split as Summary['problems']['split'], count, ids },
      allowance,
      temperature,
      ...(messages === undefined ? {} : { messages }),
      ...(fields.thinking === false ? { thinking: false as const } : {}),
      ...(taskMetrics === undefined ? {} : { taskMetrics }),
      createdAt,
      packageVersion,
      sizes,
    };
  }
}

function join(field: string, key: string): string {
  return /^[A-Za-z_]\w*$/.test(key) ? `${field}.${key}` : `${field}[${JSON.stringify(key)}]`;
}

function truncate(text: string | undefined): string {
  const shown = text ?? 'undefined';
  return shown.length > 80 ? `${shown.slice(0, 77)}...` : shown;
}

/** Checks a parsed summary.json and returns it typed; throws FormatError naming the file and the first bad field. */
export function validateSummary(options: ValidateSummaryOptions): Summary {
  return new SummaryChecker(options.file).summary(options.value);
}
