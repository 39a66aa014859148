// Checks a parsed tool call against the agent's tool specs (the JSON-schema subset of
// tool-spec.ts): the tool exists, every required argument is present, no undeclared argument
// is given (the subset only knows additionalProperties: false), and every value has its
// declared type. Checks
// that need the episode (teammate names, rooms) belong to the harness and the tasks.

import type { JsonValue } from './json-dumps.js';
import type { ToolCall } from './tool-call-parser.js';
import type { ToolCallError, ToolCallErrorKind } from './tool-call-error.js';
import type { ParameterSchema, ScalarParameterType, ToolSpec } from './tool-spec.js';

/** A value a tool argument can hold after validation. */
export type ToolArgumentValue = string | number | boolean | JsonValue[];

/** A call that matches its tool's schema. */
export interface ValidatedToolCall {
  name: string;
  arguments: Record<string, ToolArgumentValue>;
}

/** The result of `validateToolCall`. */
export type ToolValidation = { ok: true; call: ValidatedToolCall } | { ok: false; error: ToolCallError };

/** Options of `validateToolCall`: the parsed call and the tools the agent was given. */
export interface ValidateToolCallOptions {
  call: ToolCall;
  tools: readonly ToolSpec[];
}

/** Validates `call` against `tools`; reports the first problem found (tool, missing, extra, type). */
export function validateToolCall(options: ValidateToolCallOptions): ToolValidation {
  const { call, tools } = options;
  const tool = tools.find((candidate) => candidate.function.name === call.name);
  if (tool === undefined) {
    const available = tools.map((candidate) => candidate.function.name).join(', ') || '(none)';
    return failure('unknown_tool', `unknown tool ${JSON.stringify(call.name)}; available tools: ${available}`);
  }
  const { properties, required = [] } = tool.function.parameters;
  const declared = Object.keys(properties);
  const expected = declared.length === 0 ? 'it takes no arguments' : `its arguments are: ${declared.join(', ')}`;

  const missing = required.find((argument) => !Object.hasOwn(call.arguments, argument));
  if (missing !== undefined) {
    return failure('missing_argument', `tool ${JSON.stringify(call.name)} is missing required argument ${JSON.stringify(missing)}; ${expected}`);
  }
  const extra = Object.keys(call.arguments).find((argument) => !Object.hasOwn(properties, argument));
  if (extra !== undefined) {
    return failure('unexpected_argument', `tool ${JSON.stringify(call.name)} has no argument ${JSON.stringify(extra)}; ${expected}`);
  }
  for (const [argument, value] of Object.entries(call.arguments)) {
    const problem = typeProblem(properties[argument], value);
    if (problem !== null) {
      return failure('wrong_type', `argument ${JSON.stringify(argument)} of tool ${JSON.stringify(call.name)} must be ${problem}`);
    }
  }
  return { ok: true, call: { name: call.name, arguments: call.arguments as Record<string, ToolArgumentValue> } };
}

// Returns what was expected and what was found, or null when the value fits the schema.
function typeProblem(schema: ParameterSchema, value: JsonValue | undefined): string | null {
  if (schema.type !== 'array') {
    return fitsScalar(schema.type, value) ? null : `${article(schema.type)}, got ${describe(value)}`;
  }
  if (!Array.isArray(value)) return `an array, got ${describe(value)}`;
  const itemType = schema.items?.type;
  if (itemType === undefined) return null;
  const badIndex = value.findIndex((item) => !fitsScalar(itemType, item));
  if (badIndex === -1) return null;
  return `an array of ${itemType}s, but item ${badIndex} is ${describe(value[badIndex])}`;
}

function fitsScalar(type: ScalarParameterType, value: JsonValue | undefined): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
  }
}

function article(type: ScalarParameterType): string {
  return type === 'integer' ? 'an integer' : `a ${type}`;
}

function describe(value: JsonValue | undefined): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  if (typeof value === 'string') return 'a string';
  return `a ${typeof value}`;
}

function failure(kind: ToolCallErrorKind, message: string): { ok: false; error: ToolCallError } {
  return { ok: false, error: { kind, message } };
}
