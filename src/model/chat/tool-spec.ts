// The canonical JSON line that lists a tool (src/common/tool-spec.ts) in the system turn's
// <tools> block, wrapped as the Qwen3 chat template expects: {"type": "function", "function": ...}.

import type { JsonValue } from '../../common/json-dumps.js';
import { jsonDumps } from '../../common/json-dumps.js';
import type { ToolSpec } from '../../common/tool-spec.js';

/**
 * The line that lists `tool` in the system turn: Python-style JSON with keys in a fixed order
 * (type, function{name, description, parameters{type, properties, required, additionalProperties}},
 * each property {type, description, items}), so how a task builds the object never changes the prompt.
 */
export function toolSpecJson(tool: ToolSpec): string {
  const { name, description, parameters } = tool;
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
        required: parameters.required === undefined ? undefined : [...parameters.required],
        additionalProperties: parameters.additionalProperties,
      },
    },
  });
}
