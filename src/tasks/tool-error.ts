// The result a task's callTool returns when it rejects a call (bad arguments, an impossible action):
// ok false and the {"error": ...} output the model reads. Shared by every task, which must never throw.

import { toolErrorOutput } from '../common/tool-call-error.js';
import type { ToolResult } from './task.js';

/** A rejected call: ok false and {"error": message} as the output the model sees. */
export function toolError(message: string): ToolResult {
  return { ok: false, output: toolErrorOutput({ message }) };
}
