// `swarm doctor [--json]`: what this installation can do (addon, backend, CPU, CUDA, libraries).
import type { Command } from 'commander';
import { collectSystemReport, formatSystemReport } from '../native/system-report.js';

/** Registers the doctor command. */
export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('report the addon, the compute backend, CPU features, CUDA devices and optional libraries')
    .option('--json', 'print the report as JSON (stable shape, see docs/cli.md)')
    .action((options: { json?: boolean }) => {
      const report = collectSystemReport();
      process.stdout.write(options.json ? JSON.stringify(report, null, 2) + '\n' : formatSystemReport(report) + '\n');
    });
}
