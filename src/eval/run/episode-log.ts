// episodes.jsonl, the record of an evaluation's finished episodes: one JSON line per episode (its key,
// its seed path, its trace file and its metrics), appended after the episode's trace is on disk and
// flushed with fdatasync, so an interrupted evaluation knows exactly which episodes are done. A crash
// can leave at most a last line without its newline; reading ignores that line and opening for append
// cuts it off, so the episode is redone. Any other malformed line is an error naming file and line.

import { open, readFile, truncate, type FileHandle } from 'node:fs/promises';
import { FormatError } from '../../errors.js';
import type { EpisodeMetrics } from '../metrics/episode-metrics.js';
import type { EpisodeKey } from './eval-protocol.js';

/** The file name of the episode record in an evaluation directory. */
export const EPISODE_LOG_FILE_NAME = 'episodes.jsonl';

/** One finished episode: its key, how it was seeded, where its trace is, and its metrics. */
export interface EpisodeRecord extends EpisodeKey, EpisodeMetrics {
  /** The seed path it ran with (eval/<seed>/<problem id>/<N>). */
  readonly episodeSeed: string;
  /** Its trace file, relative to the evaluation directory. */
  readonly trace: string;
}

/** The records of a log and how many bytes of it are complete lines. */
export interface EpisodeLog {
  /** Complete records, in file order. */
  readonly records: readonly EpisodeRecord[];
  /** Bytes of the file up to the end of the last complete line. */
  readonly completeBytes: number;
}

type FieldKind = 'number' | 'string' | 'boolean' | 'number?' | 'string?';

const FIELDS: Readonly<Record<Exclude<keyof EpisodeRecord, 'taskMetrics'>, FieldKind>> = {
  seed: 'number',
  problemId: 'string',
  n: 'number',
  episodeSeed: 'string',
  trace: 'string',
  success: 'boolean',
  tokens: 'number',
  messageCalls: 'number',
  deliveries: 'number',
  centralization: 'number?',
  reciprocity: 'number?',
  weightedReciprocity: 'number?',
  sendGini: 'number?',
  readBeforeFirstSendShare: 'number?',
  readBeforeSendShare: 'number?',
  structure: 'string?',
  numbersSentShare: 'number?',
  numbersSentAndReadShare: 'number?',
  roomOverlap: 'number?',
  exitDoor: 'number?',
  claims: 'number?',
  duplicateClaims: 'number?',
  reports: 'number?',
  falseExhaustedReports: 'number?',
  falseReportRead: 'number?',
  falseReportShare: 'number?',
};

/** Metrics added after logs were first written: a record without them (an older evaluation) reads them as null. */
const ADDED_SINCE: readonly (keyof EpisodeRecord)[] = ['weightedReciprocity', 'readBeforeSendShare', 'falseReportRead', 'falseReportShare'];

function recordProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'expected a JSON object';
  const record = value as Record<string, unknown>;
  for (const field of ADDED_SINCE) if (!(field in record)) record[field] = null;
  for (const [field, kind] of Object.entries(FIELDS)) {
    const actual = record[field];
    const ok = kind.endsWith('?') ? actual === null || typeof actual === kind.slice(0, -1) : typeof actual === kind;
    if (!ok) return `field "${field}" must be ${kind.replace('?', ' or null')}, got ${JSON.stringify(actual) ?? 'nothing'}`;
  }
  const own = record.taskMetrics;
  if (own !== undefined) {
    const valid = typeof own === 'object' && own !== null && !Array.isArray(own) && Object.values(own).every((v) => v === null || (typeof v === 'number' && Number.isFinite(v)));
    if (!valid) return `field "taskMetrics" must be an object of numbers or nulls (the task's own metrics), got ${JSON.stringify(own)}`;
  }
  return null;
}

/** Reads a log; a missing file is an empty log, a last line without newline is ignored (an interrupted write). */
export async function readEpisodeLog(path: string): Promise<EpisodeLog> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], completeBytes: 0 };
    throw new FormatError(`cannot read ${path}: ${(error as Error).message}`);
  }
  const end = text.lastIndexOf('\n') + 1;
  const lines = text.slice(0, end).split('\n').slice(0, -1);
  const records = lines.map((line, index) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new FormatError(`${path}:${index + 1}: not valid JSON (${(error as Error).message}); expected one episode record per line.`);
    }
    const problem = recordProblem(value);
    if (problem !== null) throw new FormatError(`${path}:${index + 1}: ${problem}; expected an episode record written by swarm eval.`);
    return value as EpisodeRecord;
  });
  return { records, completeBytes: Buffer.byteLength(text.slice(0, end), 'utf8') };
}

/** Appends records to a log, one flushed line at a time, in the order append is called. */
export class EpisodeLogWriter {
  private queue: Promise<void> = Promise.resolve();

  private constructor(private readonly handle: FileHandle) {}

  /** Opens a log for appending after cutting it to `completeBytes` (dropping an interrupted last line). */
  static async open(path: string, completeBytes: number): Promise<EpisodeLogWriter> {
    try {
      await truncate(path, completeBytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return new EpisodeLogWriter(await open(path, 'a'));
  }

  /** Appends one record as a line and flushes it to disk before resolving. */
  append(record: EpisodeRecord): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    const written = this.queue.then(async () => {
      await this.handle.write(line);
      await this.handle.datasync();
    });
    this.queue = written.catch(() => undefined);
    return written;
  }

  /** Waits for pending appends and closes the file. */
  async close(): Promise<void> {
    await this.queue;
    await this.handle.close();
  }
}
