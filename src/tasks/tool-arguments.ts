// Checking a model's tool-call arguments against the tool's own JSON Schema, and the error result
// the model sees when a call is rejected. Shared by every task's callTool, which must never throw.

import { formatJson } from './json-text.js';
import type { ToolResult, ToolSpec } from './task.js';

/** The outcome of checking arguments: the values, or an error text for the model. */
export type CheckedArguments =
  | { readonly ok: true; readonly values: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly error: string };

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Checks args against spec.parameters: a plain object, every required key, no unknown key, JSON types. */
export function checkToolArguments(spec: ToolSpec, args: unknown): CheckedArguments {
  const properties = spec.parameters.properties;
  const names = Object.keys(properties);
  const usage = `${spec.name}(${names.join(', ')})`;
  if (args === undefined || args === null) {
    if (spec.parameters.required.length === 0) return { ok: true, values: {} };
    return { ok: false, error: `${usage} needs arguments: ${spec.parameters.required.map((n) => `'${n}'`).join(', ')}.` };
  }
  if (typeof args !== 'object' || Array.isArray(args)) {
    return { ok: false, error: `${usage} takes an object of named arguments, got ${describeType(args)}.` };
  }
  const values = args as Record<string, unknown>;
  const unexpected = Object.keys(values).filter((key) => !Object.hasOwn(properties, key));
  if (unexpected.length > 0) {
    const allowed = names.length === 0 ? 'no arguments' : `only ${names.map((n) => `'${n}'`).join(', ')}`;
    return { ok: false, error: `${usage} takes ${allowed}; unexpected: ${unexpected.map((k) => `'${k}'`).join(', ')}.` };
  }
  for (const name of spec.parameters.required) {
    if (!Object.hasOwn(values, name)) return { ok: false, error: `${usage} needs the argument '${name}'.` };
  }
  for (const name of Object.keys(values)) {
    const expected = properties[name].type;
    const value = values[name];
    const matches = expected === 'integer' ? Number.isSafeInteger(value) : typeof value === expected;
    if (!matches) return { ok: false, error: `Argument '${name}' of ${spec.name} must be a ${expected}, got ${describeType(value)}.` };
  }
  return { ok: true, values };
}

/** A tool name as quoted in an error text; a name that is not a string is described by its type. */
export function describeToolName(name: unknown): string {
  return typeof name === 'string' ? `'${name}'` : `(${describeType(name)}, not a name)`;
}

/** A rejected call: ok false and {"error": message} as the output the model sees. */
export function toolError(message: string): ToolResult {
  return { ok: false, output: formatJson({ error: message }) };
}
