// Per-episode trace files of an evaluation: traces/N<size>/seed<seed>/<problem id>.jsonl.gz (slashes of
// the problem id become "_"), the harness's JSONL trace (docs/trace-format.md) compressed with gzip,
// written to a temporary file and renamed, so a trace file on disk is always whole.

import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { FormatError } from '../../errors.js';
import { parseTrace, traceToJsonl, type TraceEvent } from '../../harness/index.js';
import type { EpisodeKey } from './eval-protocol.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** The trace file of an episode, relative to the evaluation directory. */
export function traceFilePath(key: EpisodeKey): string {
  return join('traces', `N${key.n}`, `seed${key.seed}`, `${key.problemId.replace(/[/\\]/g, '_')}.jsonl.gz`);
}

/** Writes a gzip-compressed JSONL trace atomically, creating its folders. */
export async function writeTraceFile(path: string, events: readonly TraceEvent[]): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, await gzipAsync(traceToJsonl(events)));
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}

/** Reads and validates a trace file written by writeTraceFile; FormatError names the file. */
export async function readTraceFile(path: string): Promise<TraceEvent[]> {
  let text: string;
  try {
    text = (await gunzipAsync(await readFile(path))).toString('utf8');
  } catch (error) {
    throw new FormatError(`cannot read the trace ${path}: ${(error as Error).message}; expected a gzip-compressed JSONL trace written by swarm eval.`);
  }
  return parseTrace(text, path);
}
