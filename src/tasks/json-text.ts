// JSON text as the models see it: the separators of Python's json.dumps (", " and ": "), which is the
// layout the paper's observations and notifications use, e.g. {"room": "R4821", "exit": false}.

/** A value that formatJson can write. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Writes a value as one line of JSON with ", " between items and ": " after keys. */
export function formatJson(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item: JsonValue) => formatJson(item)).join(', ')}]`;
  const entries = Object.entries(value as { readonly [key: string]: JsonValue });
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}: ${formatJson(item)}`).join(', ')}}`;
}
