// Reading and writing episode traces as JSONL (docs/trace-format.md): one event per line, episodes
// one after another, each from its episode_start to its episode_end. Reading validates every line
// against the version-1 schema and the episode structure, and names the file and line of the first
// problem (FormatError), so a truncated or hand-edited trace never feeds a metric silently.

import { readFile, writeFile } from 'node:fs/promises';
import { FormatError } from '../errors.js';
import { TRACE_VERSION, type EpisodeEndEvent, type EpisodeStartEvent, type TraceEvent } from './trace-events.js';

type FieldKind = 'string' | 'number' | 'boolean' | 'string?' | 'number?' | 'array' | 'object' | 'object?';

const COMMON: Readonly<Record<string, FieldKind>> = { agent: 'string' };

/** The fields every event type must have, and their JSON kinds. */
const SCHEMA: Readonly<Record<TraceEvent['type'], Readonly<Record<string, FieldKind>>>> = {
  episode_start: {
    traceVersion: 'number',
    task: 'string',
    problemId: 'string',
    n: 'number',
    agentNames: 'array',
    teammates: 'array',
    seed: 'string',
    samplingSeeds: 'array',
    communication: 'boolean',
    settings: 'object',
  },
  prompt: { ...COMMON, tokens: 'number' },
  piece: { ...COMMON, phase: 'string', position: 'number', tokens: 'array', text: 'string', finish: 'string', policyVersion: 'number?' },
  tool_call: { ...COMMON, callId: 'number', name: 'string?', arguments: 'object?', ok: 'boolean', output: 'string' },
  cut_call: { ...COMMON, text: 'string' },
  message: { ...COMMON, callId: 'number', messageId: 'number', to: 'string', recipients: 'array', text: 'string' },
  read: { ...COMMON, callId: 'number', messageIds: 'array' },
  notification: { ...COMMON, unreadBySender: 'object' },
  task_event: { ...COMMON, callId: 'number', event: 'object' },
  idle: COMMON,
  wake: COMMON,
  phase: { ...COMMON, phase: 'string', reason: 'string' },
  final_answer: { ...COMMON, phase: 'string', answer: 'string?', correct: 'boolean' },
  episode_end: { reason: 'string', teamSuccess: 'boolean', agentSuccess: 'array', tokens: 'array', totalTokens: 'number' },
};

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function fits(value: unknown, kind: FieldKind): boolean {
  const actual = kindOf(value);
  if (kind.endsWith('?')) return actual === 'null' || actual === kind.slice(0, -1);
  return actual === kind;
}

/** Checks one parsed line; returns the problem, or null when it is a valid event. */
function eventProblem(value: unknown): string | null {
  if (kindOf(value) !== 'object') return `expected a JSON object, got ${kindOf(value)}`;
  const record = value as Record<string, unknown>;
  const type = record.type;
  if (typeof type !== 'string' || !Object.hasOwn(SCHEMA, type)) {
    return `unknown event type ${JSON.stringify(type)}; expected one of ${Object.keys(SCHEMA).join(', ')}`;
  }
  for (const [field, kind] of Object.entries(SCHEMA[type as TraceEvent['type']])) {
    if (!fits(record[field], kind)) return `${type} event: field "${field}" must be ${kind.replace('?', ' or null')}, got ${kindOf(record[field])}`;
  }
  if (type === 'episode_start' && record.traceVersion !== TRACE_VERSION) {
    return `traceVersion ${String(record.traceVersion)} is not supported; this reader knows version ${TRACE_VERSION}`;
  }
  return null;
}

/** The JSONL text of events, one per line. */
export function traceToJsonl(events: readonly TraceEvent[]): string {
  return events.map((event) => `${JSON.stringify(event)}\n`).join('');
}

/** Parses and validates JSONL trace text; `source` names it in errors (a file path). */
export function parseTrace(text: string, source: string): TraceEvent[] {
  const events: TraceEvent[] = [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let open = false;
  for (let index = 0; index < lines.length; index += 1) {
    const where = `${source}:${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(lines[index]);
    } catch (error) {
      throw new FormatError(`${where}: not valid JSON (${(error as Error).message}); expected one trace event per line`);
    }
    const problem = eventProblem(value);
    if (problem !== null) throw new FormatError(`${where}: ${problem}`);
    const event = value as TraceEvent;
    if (event.type === 'episode_start') {
      if (open) throw new FormatError(`${where}: episode_start before the previous episode's episode_end`);
      open = true;
    } else if (!open) {
      throw new FormatError(`${where}: ${event.type} event outside an episode; every episode begins with episode_start`);
    } else if (event.type === 'episode_end') {
      open = false;
    }
    events.push(event);
  }
  if (open) throw new FormatError(`${source}:${lines.length}: the file ends inside an episode (no episode_end); the trace is truncated`);
  return events;
}

/** Writes events as a JSONL trace file. */
export async function writeTrace(path: string, events: readonly TraceEvent[]): Promise<void> {
  await writeFile(path, traceToJsonl(events), 'utf8');
}

/** Reads and validates a JSONL trace file; throws FormatError naming the file and line of a problem. */
export async function readTrace(path: string): Promise<TraceEvent[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new FormatError(`cannot read the trace file ${path}: ${(error as Error).message}`);
  }
  return parseTrace(text, path);
}

/** One episode's events, from its start to its end. */
export interface EpisodeTrace {
  readonly start: EpisodeStartEvent;
  readonly events: readonly TraceEvent[];
  readonly end: EpisodeEndEvent;
}

/** Splits a validated trace into its episodes. */
export function splitEpisodes(events: readonly TraceEvent[]): EpisodeTrace[] {
  const episodes: EpisodeTrace[] = [];
  let from = 0;
  events.forEach((event, index) => {
    if (event.type === 'episode_start') from = index;
    if (event.type === 'episode_end') {
      episodes.push({ start: events[from] as EpisodeStartEvent, events: events.slice(from, index + 1), end: event });
    }
  });
  return episodes;
}
