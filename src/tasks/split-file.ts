// Split files: one JSONL file per task split, written once and read back on later runs. Line 1 is a
// header naming the dataset, split, seed, record count and the SHA-256 of the record lines; each
// further line is one problem. A file that does not match is refused with a FormatError naming the
// file and line, never silently regenerated; a missing file is generated and written atomically.

import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FormatError } from '../errors.js';
import type { Split } from './task.js';

/** The format name in every split file header. */
export const SPLIT_FILE_FORMAT = 's3-split';
/** The version of the split file layout. */
export const SPLIT_FILE_VERSION = 1;

/** Line 1 of a split file. */
export interface SplitFileHeader {
  readonly format: typeof SPLIT_FILE_FORMAT;
  readonly version: typeof SPLIT_FILE_VERSION;
  readonly dataset: string;
  readonly split: Split;
  readonly seed: string;
  readonly count: number;
  /** Hex SHA-256 of every record line, each followed by "\n". */
  readonly sha256: string;
}

/** What a split file holds and how to make and read its records. */
export interface SplitFileOptions<T> {
  /** The file. */
  readonly path: string;
  /** Dataset name written to and expected in the header. */
  readonly dataset: string;
  /** Split written to and expected in the header. */
  readonly split: Split;
  /** Seed the split is generated from, written to and expected in the header. */
  readonly seed: string;
  /** Number of records expected. */
  readonly count: number;
  /** Generates the records when the file is missing. */
  readonly generate: () => readonly T[];
  /** A record as a JSON-serializable value. */
  readonly encode: (record: T) => unknown;
  /** A record from parsed JSON; throws FormatError naming `where` when malformed. */
  readonly decode: (value: unknown, where: string) => T;
}

let temporaryCounter = 0;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function refuse(path: string, line: number, reason: string): FormatError {
  return new FormatError(`${path}:${line}: ${reason}. Delete the file to regenerate it.`);
}

function parseHeader<T>(text: string, options: SplitFileOptions<T>): SplitFileHeader {
  let header: Partial<Record<keyof SplitFileHeader, unknown>>;
  try {
    header = JSON.parse(text) as Partial<Record<keyof SplitFileHeader, unknown>>;
  } catch {
    throw refuse(options.path, 1, 'the header line is not JSON');
  }
  if (typeof header !== 'object' || header === null || header.format !== SPLIT_FILE_FORMAT) {
    throw refuse(options.path, 1, `the header is not an ${SPLIT_FILE_FORMAT} header`);
  }
  if (header.version !== SPLIT_FILE_VERSION) {
    throw refuse(options.path, 1, `header version ${JSON.stringify(header.version)} is not ${SPLIT_FILE_VERSION}`);
  }
  const expected = { dataset: options.dataset, split: options.split, seed: options.seed, count: options.count } as const;
  for (const field of ['dataset', 'split', 'seed', 'count'] as const) {
    if (header[field] !== expected[field]) {
      throw refuse(options.path, 1, `header ${field} is ${JSON.stringify(header[field])}, expected ${JSON.stringify(expected[field])}`);
    }
  }
  if (typeof header.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(header.sha256)) {
    throw refuse(options.path, 1, 'header sha256 is not a hex SHA-256 digest');
  }
  return header as unknown as SplitFileHeader;
}

function parseSplitFile<T>(text: string, options: SplitFileOptions<T>): T[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] !== '') throw refuse(options.path, lines.length, 'the file does not end with a newline (truncated?)');
  lines.pop();
  const header = parseHeader(lines[0] ?? '', options);
  const recordLines = lines.slice(1);
  if (recordLines.length !== header.count) {
    throw refuse(options.path, lines.length, `the file has ${recordLines.length} records, the header says ${header.count}`);
  }
  const records = recordLines.map((line, index) => {
    const lineNumber = index + 2;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw refuse(options.path, lineNumber, 'the line is not JSON');
    }
    try {
      return options.decode(value, `${options.path}:${lineNumber}`);
    } catch (error) {
      if (error instanceof FormatError) throw new FormatError(`${error.message} Delete the file to regenerate it.`);
      throw error;
    }
  });
  const digest = sha256(recordLines.map((line) => `${line}\n`).join(''));
  if (digest !== header.sha256) {
    throw refuse(options.path, 1, `the records' SHA-256 ${digest} does not match the header's ${header.sha256} (the file was modified)`);
  }
  return records;
}

/** Reads a split file, or generates and writes it when it does not exist; refuses a corrupted file. */
export async function readOrCreateSplitFile<T>(options: SplitFileOptions<T>): Promise<readonly T[]> {
  let text: string | null = null;
  try {
    text = await readFile(options.path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text !== null) return parseSplitFile(text, options);

  const records = options.generate();
  const recordLines = records.map((record) => `${JSON.stringify(options.encode(record))}\n`).join('');
  const header: SplitFileHeader = {
    format: SPLIT_FILE_FORMAT,
    version: SPLIT_FILE_VERSION,
    dataset: options.dataset,
    split: options.split,
    seed: options.seed,
    count: records.length,
    sha256: sha256(recordLines),
  };
  await mkdir(dirname(options.path), { recursive: true });
  // Write beside the target and rename, so a concurrent reader never sees half a file.
  temporaryCounter += 1;
  const temporary = `${options.path}.${process.pid}.${temporaryCounter}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(header)}\n${recordLines}`, 'utf8');
    await rename(temporary, options.path);
  } finally {
    await rm(temporary, { force: true });
  }
  return records;
}
