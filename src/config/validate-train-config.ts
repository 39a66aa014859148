// Validation of train configs against TRAIN_CONFIG_FIELDS: unknown fields, wrong types and
// out-of-range values are refused with a ConfigError naming where the value came from (preset,
// file or flag), the field, the value and what was expected; then the checks that involve two
// fields at once.
import { ConfigError } from '../errors.js';
import { isTaskModulePath } from '../tasks/load-task.js';
import { configField, isConfigGroup, NULLABLE_GROUPS, TRAIN_CONFIG_FIELDS, type ConfigField, type FieldType } from './train-config-fields.js';
import type { TrainConfig } from './train-config.js';
import { isRecord, readPath } from './config-path.js';

/** Says where the value at a path came from, e.g. `config file run.json` or `--set rlUpdates=3`. */
export type OriginOf = (path: string) => string;

function inRange(value: number, type: { min: number; max?: number; exclusiveMin?: boolean }): boolean {
  const aboveMin = type.exclusiveMin ? value > type.min : value >= type.min;
  return aboveMin && (type.max === undefined || value <= type.max);
}

function rangeText(type: { min: number; max?: number; exclusiveMin?: boolean }): string {
  const low = `${type.exclusiveMin ? '>' : '>='} ${type.min}`;
  return type.max === undefined ? low : `${low} and <= ${type.max}`;
}

/** What a value of this type must look like, in words. */
export function expectation(type: FieldType): string {
  switch (type.kind) {
    case 'integer':
      return `an integer ${rangeText(type)}`;
    case 'number':
      return `a finite number ${rangeText(type)}`;
    case 'boolean':
      return 'true or false';
    case 'string':
      return 'a non-empty string';
    case 'enum':
      return `one of ${type.values.join(', ')}`;
    case 'task':
      return `one of ${type.values.join(', ')}, or a task module's path (./my-task.js)`;
    case 'number-pair':
      return `two numbers in [${type.min}, ${type.max}]`;
    case 'integer-list':
      return `a non-empty list of integers >= ${type.min}`;
    case 'string-list':
      return 'a list of strings';
  }
}

function valueFits(type: FieldType, value: unknown): boolean {
  const number = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  switch (type.kind) {
    case 'integer':
      return number(value) && Number.isSafeInteger(value) && inRange(value, type);
    case 'number':
      return number(value) && inRange(value, type);
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string' && value.length > 0;
    case 'enum':
      return typeof value === 'string' && type.values.includes(value);
    case 'task':
      return typeof value === 'string' && (type.values.includes(value) || isTaskModulePath(value));
    case 'number-pair':
      return Array.isArray(value) && value.length === 2 && value.every((v) => number(v) && v >= type.min && v <= type.max);
    case 'integer-list':
      return Array.isArray(value) && value.length > 0 && value.every((v) => number(v) && Number.isSafeInteger(v) && v >= type.min);
    case 'string-list':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
  }
}

/** Throws a ConfigError unless `value` fits `field`. */
export function checkFieldValue(field: ConfigField, value: unknown, origin: string): void {
  if (value === null && field.nullable) return;
  if (!valueFits(field.type, value)) {
    const nullNote = field.nullable ? ' or null' : '';
    throw new ConfigError(`${origin}: ${field.path} must be ${expectation(field.type)}${nullNote}, got ${JSON.stringify(value)}.`);
  }
}

/**
 * Checks a (possibly partial) config object: every key must be a known field or group and every
 * leaf must fit its type. Returns the paths it sets (a nullable group set to null counts as one path).
 */
export function validatePartialConfig(value: unknown, origin: string, prefix = ''): string[] {
  if (!isRecord(value)) {
    throw new ConfigError(`${origin}: ${prefix === '' ? 'the config' : prefix} must be a JSON object, got ${JSON.stringify(value)}.`);
  }
  const paths: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const field = configField(path);
    if (field !== undefined) {
      checkFieldValue(field, child, origin);
      paths.push(path);
    } else if (isConfigGroup(path)) {
      if (child === null && NULLABLE_GROUPS.includes(path)) paths.push(path);
      else paths.push(...validatePartialConfig(child, origin, path));
    } else {
      const siblings = TRAIN_CONFIG_FIELDS.map((f) => f.path)
        .filter((p) => (prefix === '' ? true : p.startsWith(`${prefix}.`)))
        .map((p) => p.slice(prefix === '' ? 0 : prefix.length + 1).split('.')[0]);
      throw new ConfigError(`${origin}: unknown field "${path}"; expected one of ${[...new Set(siblings)].join(', ')}.`);
    }
  }
  return paths;
}

/** Checks a complete config: every field present and valid, then the cross-field rules. */
export function validateTrainConfig(config: TrainConfig, originOf: OriginOf): TrainConfig {
  validatePartialConfig(config, originOf(''));
  const record = config as unknown as Record<string, unknown>;
  for (const field of TRAIN_CONFIG_FIELDS) {
    const [group] = field.path.split('.');
    if (field.path.includes('.') && NULLABLE_GROUPS.includes(group) && record[group] === null) continue;
    if (readPath(record, field.path) === undefined) {
      throw new ConfigError(`${originOf(field.path)}: ${field.path} is missing; expected ${expectation(field.type)}.`);
    }
  }
  const fail = (path: string, message: string): never => {
    throw new ConfigError(`${originOf(path)}: ${message}`);
  };
  if (config.pgCorrection.icePopLow >= config.pgCorrection.icePopHigh) {
    fail('pgCorrection.icePopLow', `pgCorrection.icePopLow (${config.pgCorrection.icePopLow}) must be below pgCorrection.icePopHigh (${config.pgCorrection.icePopHigh}).`);
  }
  if ((config.pgCorrection.klCoefficient > 0) !== (config.pgCorrection.klEstimator !== 'none')) {
    fail('pgCorrection.klEstimator', `pgCorrection.klEstimator must be "none" exactly when pgCorrection.klCoefficient is 0, got ${config.pgCorrection.klEstimator} with coefficient ${config.pgCorrection.klCoefficient}.`);
  }
  if (config.pgCorrection.klCoefficient > 0 && config.temperature !== 1) {
    // The trainer's log-probs are tempered (π_θ = softmax(z / T), what the sampler drew from); the reference's scores are not.
    fail('temperature', `temperature ${config.temperature} with the KL penalty (pgCorrection.klCoefficient ${config.pgCorrection.klCoefficient}): the reference policy is scored at temperature 1; use temperature 1.0 (Table 4) or klCoefficient 0.`);
  }
  if (config.optimizer.warmupUpdates > config.rlUpdates) {
    fail('optimizer.warmupUpdates', `optimizer.warmupUpdates (${config.optimizer.warmupUpdates}) must not exceed rlUpdates (${config.rlUpdates}).`);
  }
  if (config.generationPieceTokens > config.workAllowance) {
    fail('generationPieceTokens', `generationPieceTokens (${config.generationPieceTokens}) must not exceed workAllowance (${config.workAllowance}).`);
  }
  if (config.contextLength < config.workAllowance + config.finalAllowance) {
    fail('contextLength', `contextLength (${config.contextLength}) must hold at least workAllowance + finalAllowance (${config.workAllowance + config.finalAllowance}).`);
  }
  return config;
}
