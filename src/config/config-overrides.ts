// `--set path.to.field=value` overrides: the text after `=` is parsed by the type of the field it
// names (integers, numbers such as 5e-7, true/false, comma-separated pairs and lists, `null` where
// the field allows it), then checked like any other value.
import { ConfigError } from '../errors.js';
import { configField, NULLABLE_GROUPS, TRAIN_CONFIG_FIELDS, type FieldType } from './train-config-fields.js';
import { checkFieldValue, expectation } from './validate-train-config.js';

/** One parsed override. */
export interface ConfigOverride {
  /** Dotted field path. */
  readonly path: string;
  /** The typed value. */
  readonly value: unknown;
  /** The flag as given, for messages. */
  readonly origin: string;
}

function parseNumber(text: string): number {
  return text.trim() === '' ? Number.NaN : Number(text);
}

function parseTyped(type: FieldType, text: string): unknown {
  switch (type.kind) {
    case 'integer':
      return /^-?\d+$/.test(text.trim()) ? Number(text) : text;
    case 'number':
      return Number.isFinite(parseNumber(text)) ? parseNumber(text) : text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'string':
    case 'enum':
    case 'task':
      return text;
    case 'number-pair':
    case 'integer-list': {
      const parts = text.split(',').map(parseNumber);
      return parts.every(Number.isFinite) ? parts : text;
    }
    case 'string-list':
      return text === '' ? [] : text.split(',').map((part) => part.trim());
  }
}

/** Parses one `--set path=value`, typed by the field it names; throws a ConfigError naming the flag. */
export function parseConfigOverride(assignment: string): ConfigOverride {
  const origin = `--set ${assignment}`;
  const equals = assignment.indexOf('=');
  if (equals <= 0) throw new ConfigError(`${origin}: expected path.to.field=value, e.g. --set optimizer.learningRate=5e-7.`);
  const path = assignment.slice(0, equals).trim();
  const text = assignment.slice(equals + 1);
  if (NULLABLE_GROUPS.includes(path)) {
    if (text === 'null') return { path, value: null, origin };
    throw new ConfigError(`${origin}: ${path} is a group; set it to null here, or set its fields one by one (${path}.<field>=value).`);
  }
  const field = configField(path);
  if (field === undefined) {
    throw new ConfigError(`${origin}: unknown field "${path}"; expected one of ${TRAIN_CONFIG_FIELDS.map((f) => f.path).join(', ')}.`);
  }
  const value = text === 'null' && field.nullable ? null : parseTyped(field.type, text);
  if (value === text && field.type.kind !== 'string' && field.type.kind !== 'enum' && field.type.kind !== 'task') {
    throw new ConfigError(`${origin}: ${path} must be ${expectation(field.type)}, got "${text}".`);
  }
  checkFieldValue(field, value, origin);
  return { path, value, origin };
}
