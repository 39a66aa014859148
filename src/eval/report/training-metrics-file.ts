// Reading a training run's metrics.jsonl (written by swarm train, docs/run-format.md) into the rows
// the training curves plot: the RL updates, with nested objects flattened (policyLag.mean becomes
// policyLagMean, structure.oneBroadcastEach becomes structureOneBroadcastEach). An unreadable line
// is an error naming the file and line.
import fs from 'node:fs';
import { FormatError } from '../../errors.js';
import type { TrainingMetricsRow } from './training-plot.js';

function flatten(prefix: string, value: unknown, into: Record<string, unknown>): void {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) flatten(prefix === '' ? key : `${prefix}${key[0].toUpperCase()}${key.slice(1)}`, inner, into);
  } else into[prefix] = value;
}

/** The RL rows of metrics.jsonl (SFT rows are left out), flattened. */
export function readTrainingMetrics(file: string): TrainingMetricsRow[] {
  const text = fs.readFileSync(file, 'utf8');
  const rows: TrainingMetricsRow[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new FormatError(`${file}:${index + 1}: not valid JSON (${(error as Error).message}); expected one metrics object per line.`);
    }
    const record = value as Record<string, unknown>;
    if (record.stage !== 'rl') return;
    if (typeof record.update !== 'number') throw new FormatError(`${file}:${index + 1}: "update" must be a number.`);
    const flat: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(record)) if (key !== 'stage' && key !== 'elapsed') flatten(key, inner, flat);
    rows.push(flat as TrainingMetricsRow);
  });
  return rows;
}
