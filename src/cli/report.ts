// `swarm report`: one self-contained HTML page from evaluation directories (summaries, plots against N,
// paired comparisons of comparable evaluations, sample message graphs); prints where it was written.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { buildEvaluationReport } from '../eval/run/index.js';

/** Registers `swarm report`. */
export function registerReport(program: Command): void {
  program
    .command('report')
    .description('write an HTML report of evaluations: plots against N, paired comparisons, message graphs')
    .argument('<dirs...>', 'evaluation directories written by swarm eval, or folders holding them')
    .option('--out <file>', 'the HTML file (default: <first dir>/report.html)')
    .action(async (dirs: string[], flags: { out?: string }) => {
      const report = await buildEvaluationReport({ paths: dirs });
      const out = flags.out ?? join(dirs[0], 'report.html');
      await mkdir(dirname(out), { recursive: true });
      await writeFile(out, report.html, 'utf8');
      process.stdout.write(`${out}\n`);
    });
}
