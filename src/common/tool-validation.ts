// Checks a tool call against the agent's tool specs (the JSON-schema subset of tool-spec.ts): the
// name is a known tool, the arguments are an object, every required argument is present, no
// undeclared argument is given and every value has its declared type. Used by the harness on every
// parsed call and by tasks' callTool, which must answer anything a model wrote without throwing.
// Checks that need the episode (teammate names, rooms) belong to the harness and the tasks.

import type { JsonValue } from './json-dumps.js';
import type { ToolCallError, ToolCallErrorKind } from './tool-call-error.js';
import type { ParameterSchema, ScalarParameterType, ToolSpec } from './tool-spec.js';

/** A value a tool argument can hold after validation. */
export type ToolArgumentValue = string | number | boolean | JsonValue[];

/** A call that matches its tool's schema. */
export interface ValidatedToolCall {
  /** The tool's name. */
  name: string;
  /** The arguments, each of its declared type. */
  arguments: Record<string, ToolArgumentValue>;
}

/** The result of `validateToolCall`. */
export type ToolValidation = { ok: true; call: ValidatedToolCall } | { ok: false; error: ToolCallError };

/** A call as written: a parsed call from the chat parser, or the raw name and arguments a task receives. */
export interface UncheckedToolCall {
  /** The tool name as written (anything, when it comes from outside the chat parser). */
  readonly name: unknown;
  /** The arguments as written; undefined means none. */
  readonly arguments: unknown;
}

/** Options of `validateToolCall`: the call and the tools the agent was given. */
export interface ValidateToolCallOptions {
  /** The call to check. */
  call: UncheckedToolCall;
  /** The tools the agent may call. */
  tools: readonly ToolSpec[];
}

/** Validates `call` against `tools`; reports the first problem found (tool, arguments object, missing, extra, type). */
export function validateToolCall(options: ValidateToolCallOptions): ToolValidation {
  const { call, tools } = options;
  const name = call.name;
  const tool = typeof name === 'string' ? tools.find((candidate) => candidate.name === name) : undefined;
  if (tool === undefined) {
    const available = tools.map((candidate) => candidate.name).join(', ') || '(none)';
    const written = typeof name === 'string' ? JSON.stringify(name) : `(${describe(name as JsonValue)}, not a name)`;
    return failure('unknown_tool', `unknown tool ${written}; available tools: ${available}`);
  }
  const args = call.arguments === undefined ? {} : call.arguments;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return failure('invalid_arguments', `tool call "arguments" must be a JSON object, got ${describe(args as JsonValue)}`);
  }
  const values = args as Record<string, JsonValue>;
  const { properties, required = [] } = tool.parameters;
  const declared = Object.keys(properties);
  const expected = declared.length === 0 ? 'it takes no arguments' : `its arguments are: ${declared.join(', ')}`;

  const missing = required.find((argument) => !Object.hasOwn(values, argument));
  if (missing !== undefined) {
    return failure('missing_argument', `tool ${JSON.stringify(tool.name)} is missing required argument ${JSON.stringify(missing)}; ${expected}`);
  }
  const extra = Object.keys(values).find((argument) => !Object.hasOwn(properties, argument));
  if (extra !== undefined) {
    return failure('unexpected_argument', `tool ${JSON.stringify(tool.name)} has no argument ${JSON.stringify(extra)}; ${expected}`);
  }
  for (const [argument, value] of Object.entries(values)) {
    const problem = typeProblem(properties[argument], value);
    if (problem !== null) {
      return failure('wrong_type', `argument ${JSON.stringify(argument)} of tool ${JSON.stringify(tool.name)} must be ${problem}`);
    }
  }
  return { ok: true, call: { name: tool.name, arguments: values as Record<string, ToolArgumentValue> } };
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
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  if (typeof value === 'string') return 'a string';
  return `a ${typeof value}`;
}

function failure(kind: ToolCallErrorKind, message: string): { ok: false; error: ToolCallError } {
  return { ok: false, error: { kind, message } };
}
