// The shape of a tool as the model sees it: an OpenAI-style function schema restricted to the
// JSON-schema subset s³ tools need, and its canonical JSON line for the system turn's <tools>.

import type { JsonValue } from './json-dumps.js';
import { jsonDumps } from './json-dumps.js';

/** The JSON-schema type of a scalar tool argument. */
export type ScalarParameterType = 'string' | 'integer' | 'number' | 'boolean';

/** The schema of one tool argument: a scalar, or an array of (optionally typed) items. */
export type ParameterSchema =
  | { type: ScalarParameterType; description?: string }
  | { type: 'array'; items?: { type: ScalarParameterType }; description?: string };

/** The schema of a tool's arguments object; undeclared arguments are always rejected. */
export interface ToolParameters {
  type: 'object';
  properties: Record<string, ParameterSchema>;
  required?: string[];
  /** Shown to the model when set; validation rejects undeclared arguments either way. */
  additionalProperties?: false;
}

/** One tool in the format the Qwen3 chat template lists inside <tools></tools>. */
export interface ToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: ToolParameters };
}

/**
 * The line that lists `tool` in the system turn: Python-style JSON with keys in a fixed order
 * (type, function{name, description, parameters{type, properties, required, additionalProperties}},
 * each property {type, description, items}), so how a task builds the object never changes the prompt.
 */
export function toolSpecJson(tool: ToolSpec): string {
  const { name, description, parameters } = tool.function;
  const properties: Record<string, JsonValue> = {};
  for (const [argument, schema] of Object.entries(parameters.properties)) {
    properties[argument] = {
      type: schema.type,
      description: schema.description,
      items: schema.type === 'array' && schema.items !== undefined ? { type: schema.items.type } : undefined,
    };
  }
  return jsonDumps({
    type: 'function',
    function: {
      name,
      description,
      parameters: {
        type: 'object',
        properties,
        required: parameters.required,
        additionalProperties: parameters.additionalProperties,
      },
    },
  });
}
