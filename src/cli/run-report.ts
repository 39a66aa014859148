// The report of a training run: the evaluations under RUN_DIR/eval and the RL training curves from
// RUN_DIR/metrics.jsonl, as one HTML page written to RUN_DIR/report.html.
import fs from 'node:fs';
import path from 'node:path';
import { buildEvaluationReport } from '../eval/run/index.js';
import { readTrainingMetrics } from '../eval/report/training-metrics-file.js';

/** Whether `directory` is a run directory written by swarm train. */
export function isRunDirectory(directory: string): boolean {
  return fs.existsSync(path.join(directory, 'state.json')) && fs.existsSync(path.join(directory, 'metrics.jsonl'));
}

/** Writes RUN_DIR/report.html (or `out`) and returns its path. */
export async function writeRunReport(directory: string, out = path.join(directory, 'report.html')): Promise<string> {
  const evalRoot = path.join(directory, 'eval');
  const evalDirs = fs.existsSync(evalRoot)
    ? fs
        .readdirSync(evalRoot)
        .sort((a, b) => (a === 'before' ? -1 : b === 'before' ? 1 : a.localeCompare(b)))
        .map((name) => path.join(evalRoot, name))
        .filter((dir) => fs.existsSync(path.join(dir, 'summary.json')))
    : [];
  const report = await buildEvaluationReport({
    paths: evalDirs,
    title: `s³ training run ${path.basename(path.resolve(directory))}`,
    trainingMetrics: readTrainingMetrics(path.join(directory, 'metrics.jsonl')),
  });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, report.html, 'utf8');
  return out;
}
