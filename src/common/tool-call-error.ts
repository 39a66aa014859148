// The problems a tool call can have, as plain values (never thrown): what the chat parser finds in
// the sampled text and what validation finds against the tool specs. Each carries the message
// the agent reads as its tool output, so a malformed call is answered instead of crashing; tasks
// and the harness answer calls they reject for their own reasons (not a door, unknown teammate)
// with the same {"error": ...} output.

import { jsonDumps } from './json-dumps.js';

/** Every kind of tool-call problem: parsing kinds first, then validation kinds. */
export type ToolCallErrorKind =
  | 'empty_call'
  | 'invalid_json'
  | 'not_an_object'
  | 'missing_name'
  | 'invalid_name'
  | 'invalid_arguments'
  | 'unexpected_field'
  | 'nested_call'
  | 'unmatched_close'
  | 'call_in_thinking'
  | 'cut_off'
  | 'unknown_tool'
  | 'missing_argument'
  | 'unexpected_argument'
  | 'wrong_type';

/** One tool-call problem: its kind and a message written for the agent. */
export interface ToolCallError {
  kind: ToolCallErrorKind;
  message: string;
}

/** The tool output that answers a rejected call: `{"error": "<message>"}` in Python-style JSON. */
export function toolErrorOutput(error: Pick<ToolCallError, 'message'>): string {
  return jsonDumps({ error: error.message });
}
