// `swarm report`: one self-contained HTML page from evaluation directories (summaries, plots against N,
// paired comparisons of comparable evaluations, sample message graphs), or from a training run
// directory (its before/after evaluations and training curves); prints where it was written.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { buildEvaluationReport } from '../eval/run/index.js';
import { isRunDirectory, writeRunReport } from './run-report.js';

/** Registers `swarm report`. */
export function registerReport(program: Command): void {
  program
    .command('report')
    .description('write an HTML report of evaluations (plots against N, paired comparisons, message graphs) or of a training run (also its training curves)')
    .argument('<dirs...>', 'evaluation directories written by swarm eval, folders holding them, or one run directory written by swarm train')
    .option('--out <file>', 'the HTML file (default: <first dir>/report.html)')
    .action(async (dirs: string[], flags: { out?: string }) => {
      if (dirs.length === 1 && isRunDirectory(dirs[0])) {
        process.stdout.write(`${await writeRunReport(dirs[0], flags.out)}\n`);
        return;
      }
      const report = await buildEvaluationReport({ paths: dirs });
      const out = flags.out ?? join(dirs[0], 'report.html');
      await mkdir(dirname(out), { recursive: true });
      await writeFile(out, report.html, 'utf8');
      process.stdout.write(`${out}\n`);
    });
}
