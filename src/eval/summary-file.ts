// Reading and writing summary.json files: validated on both sides, written atomically (a temporary file
// beside the target, then rename) so a reader never sees half a summary.

import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FormatError } from '../errors.js';
import type { Summary } from './summary.js';
import { validateSummary } from './summary-validation.js';

/** The file name `swarm eval` writes in its output directory. */
export const SUMMARY_FILE_NAME = 'summary.json';

let temporaryCounter = 0;

// A multi-line JSON array whose items are all numbers, strings, booleans or null.
const PRIMITIVE_ARRAY = /\[\n\s*((?:(?:-?[\d.eE+-]+|null|true|false|"(?:[^"\\]|\\.)*"),?\n\s*)+)\]/g;

/** The summary as indented JSON text with lists of plain values (perSeed, seeds, ids) kept on one line. */
export function formatSummaryJson(summary: Summary): string {
  const indented = JSON.stringify(summary, null, 2);
  return `${indented.replace(PRIMITIVE_ARRAY, (_match, items: string) => `[${items.trim().split(/,\n\s*/).join(', ')}]`)}\n`;
}

/** Reads and validates a summary.json; throws FormatError naming the file (and field) when it is unreadable or malformed. */
export async function readSummary(path: string): Promise<Summary> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new FormatError(`${path}: cannot read the summary (${(error as Error).message}); expected a summary.json written by swarm eval.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new FormatError(`${path}: not valid JSON (${(error as Error).message}); expected a summary.json written by swarm eval.`);
  }
  return validateSummary({ value, file: path });
}

/** Validates a summary and writes it as indented JSON, atomically; creates the parent directory. */
export async function writeSummary(path: string, summary: Summary): Promise<void> {
  validateSummary({ value: summary, file: path });
  await mkdir(dirname(path), { recursive: true });
  temporaryCounter += 1;
  const temporary = `${path}.${process.pid}.${temporaryCounter}.tmp`;
  try {
    await writeFile(temporary, formatSummaryJson(summary), 'utf8');
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}
