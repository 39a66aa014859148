// `swarm compare`: paired t-tests between evaluation directories (every pair on the main metrics, or
// the families of --config, or Table 9's families over evaluations given by role), printed as a table
// like the paper's Table 9 or as {"comparisons": [...]}.
import type { Command } from 'commander';
import { comparisonsJson, formatComparisonTable } from '../eval/comparison-table.js';
import { ConfigError } from '../errors.js';
import { compareDirs, compareTable9 } from '../eval/run/index.js';
import { TABLE9_ROLES } from '../eval/table9.js';

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Registers `swarm compare`. */
export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description('paired t-tests between evaluations (same task, problems and seeds), Bonferroni-corrected within families')
    .argument('[dirs...]', 'evaluation directories written by swarm eval (or folders of them)')
    .option('--json', 'print {"comparisons": [...]} (docs/summary-format.md)')
    .option('--config <file>', 'families of contrasts to test; evaluations are named by directory')
    .option('--family <name>', 'table9: the Bonferroni families of the paper\'s Table 9 (App. J.1), over the evaluations given with --as')
    .option('--as <role=dir>', `with --family table9: an evaluation and its role (${TABLE9_ROLES.join(', ')}), once per role and task (repeatable)`, collect)
    .action(async (dirs: string[], flags: { json?: boolean; config?: string; family?: string; as?: string[] }) => {
      if (flags.family !== undefined) {
        if (flags.family !== 'table9') throw new ConfigError(`--family must be table9, got ${JSON.stringify(flags.family)}.`);
        if (dirs.length > 0 || flags.config !== undefined) throw new ConfigError('--family table9 takes its evaluations from --as ROLE=DIR, not from directories or --config.');
        const { comparisons, skipped } = await compareTable9(flags.as ?? []);
        const omitted = skipped.map((s) => `${s.family}: ${s.a} vs. ${s.b} (${s.reason}; it still counts in its family's correction)`);
        process.stdout.write(
          flags.json
            ? `${JSON.stringify({ ...comparisonsJson(comparisons), skipped })}\n`
            : `${formatComparisonTable(comparisons)}${omitted.length === 0 ? '' : `not run:\n${omitted.map((line) => `  ${line}`).join('\n')}\n`}`,
        );
        return;
      }
      if (flags.as !== undefined) throw new ConfigError('--as only applies with --family table9.');
      const comparisons = await compareDirs({ paths: dirs, ...(flags.config === undefined ? {} : { configPath: flags.config }) });
      process.stdout.write(flags.json ? `${JSON.stringify(comparisonsJson(comparisons))}\n` : formatComparisonTable(comparisons));
    });
}
