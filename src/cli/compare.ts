// `swarm compare`: paired t-tests between evaluation directories (every pair on the main metrics, or
// the families of --config), printed as a table like the paper's Table 9 or as {"comparisons": [...]}.
import type { Command } from 'commander';
import { comparisonsJson, formatComparisonTable } from '../eval/comparison-table.js';
import { compareDirs } from '../eval/run/index.js';

/** Registers `swarm compare`. */
export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description('paired t-tests between evaluations (same task, problems and seeds), Bonferroni-corrected within families')
    .argument('[dirs...]', 'evaluation directories written by swarm eval (or folders of them)')
    .option('--json', 'print {"comparisons": [...]} (docs/summary-format.md)')
    .option('--config <file>', 'families of contrasts to test; evaluations are named by directory')
    .action(async (dirs: string[], flags: { json?: boolean; config?: string }) => {
      const comparisons = await compareDirs({ paths: dirs, ...(flags.config === undefined ? {} : { configPath: flags.config }) });
      process.stdout.write(flags.json ? `${JSON.stringify(comparisonsJson(comparisons))}\n` : formatComparisonTable(comparisons));
    });
}
