// The canonical text of a tool call inside an assistant turn, as Qwen3's chat template writes
// it and as the model is prompted to: for scripted demonstrations and tests that must produce
// assistant text the parser and the model agree on.

import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from './chat-markers.js';
import type { JsonValue } from '../../common/json-dumps.js';
import { jsonDumps } from '../../common/json-dumps.js';

/** Options of `renderToolCall`: the tool's name and its arguments. */
export interface ToolCallTextOptions {
  name: string;
  arguments: Record<string, JsonValue>;
}

/** `<tool_call>\n{"name": "<name>", "arguments": <args>}\n</tool_call>` with Python-style JSON. */
export function renderToolCall(options: ToolCallTextOptions): string {
  return `${TOOL_CALL_OPEN}\n${jsonDumps({ name: options.name, arguments: options.arguments })}\n${TOOL_CALL_CLOSE}`;
}
