// JSON text exactly as Python's `json.dumps(value, ensure_ascii=False)` writes it, which is what
// the `tojson` filter of Hugging Face's chat templates produces: `", "` between items, `": "`
// after keys, keys in insertion order, non-ASCII characters written as themselves. Tool specs in
// the system turn, task observations, harness tool outputs and notifications all use it, so
// rendered histories match the stock template and the paper's examples.
// One deliberate difference: inside strings, the `<` that starts a Qwen3 marker (`<|im_end|>`,
// `<tool_call>`, `</think>`, ...) is written `\u003c`, so text an agent or teammate wrote can never
// tokenize to a marker id inside a tool output. The JSON still decodes to the same string.

import { SwarmError } from '../errors.js';

/** A value jsonDumps cannot write (NaN, Infinity, a function, ...). */
export class JsonEncodingError extends SwarmError {}

/** A value that `jsonDumps` can write. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue | undefined };

/** Serializes `value` as Python's `json.dumps(value, ensure_ascii=False)` would, with marker `<`s escaped. */
export function jsonDumps(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return dumpNumber(value);
  if (typeof value === 'string') return dumpString(value);
  if (Array.isArray(value)) return `[${value.map((item) => jsonDumps(item)).join(', ')}]`;
  if (typeof value === 'object') {
    const items: string[] = [];
    for (const [key, item] of Object.entries(value)) {
      // Optional fields left undefined are omitted, as JSON.stringify does.
      if (item === undefined) continue;
      items.push(`${dumpString(key)}: ${jsonDumps(item)}`);
    }
    return `{${items.join(', ')}}`;
  }
  throw new JsonEncodingError(`jsonDumps: cannot write a value of type ${typeof value}; expected null, boolean, number, string, array or object`);
}

// The `<` of `<|name|>`, `<tool_call>`, `</tool_call>`, `<tool_response>`, `</tool_response>`,
// `<think>` and `</think>`: every added token of Qwen3's tokenizer.json has one of these forms.
const MARKER_START = /<(?=\|[a-z_]+\|>|\/?(?:tool_call|tool_response|think)>)/g;

// JSON.stringify escapes exactly Python's set (", \, control characters) for well-formed strings.
function dumpString(value: string): string {
  const json = JSON.stringify(value);
  return json.includes('<') ? json.replace(MARKER_START, '\\u003c') : json;
}

// Integral numbers print as Python ints; others as Python's float repr (shortest digits,
// scientific notation with a two-digit exponent below 1e-4).
function dumpNumber(value: number): string {
  if (!Number.isFinite(value)) {
    throw new JsonEncodingError(`jsonDumps: cannot write the number ${value}; JSON has no NaN or Infinity`);
  }
  if (Number.isInteger(value)) return BigInt(value).toString();
  const [mantissa, exponentText] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent >= -4) return String(value);
  const magnitude = String(Math.abs(exponent)).padStart(2, '0');
  return `${mantissa}e-${magnitude}`;
}
