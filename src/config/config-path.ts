// Dotted paths into a config object (`optimizer.learningRate`): reading and writing one leaf.

/** Whether a value is a plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a dotted path, or undefined. */
export function readPath(record: Record<string, unknown>, path: string): unknown {
  let at: unknown = record;
  for (const key of path.split('.')) {
    if (!isRecord(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

/** Sets the value at a dotted path, creating groups on the way. */
export function writePath(record: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = record;
  for (const key of keys.slice(0, -1)) {
    if (!isRecord(at[key])) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys[keys.length - 1]] = value;
}
