// `swarm task inspect exploration --depth D --seed S [--json]`: the facts of one generated tree
// (Table 3: rooms, dead ends, shortest-path and full-DFS moves, the exit's door at the first fork).
import type { Command } from 'commander';
import { createRng, generateTree, inspectTree } from '../tasks/index.js';
import { ConfigError } from '../errors.js';
import { parseIntegerFlag } from './options.js';

/** Registers `swarm task inspect`. */
export function registerTask(program: Command): void {
  const task = program.command('task').description('inspect the tasks and their problems');
  task
    .command('inspect')
    .description('print the facts of a generated exploration tree')
    .argument('<task>', 'the task (exploration)')
    .option('--depth <d>', 'tree depth (2: SFT demonstrations, 3: RL and evaluation)', '3')
    .option('--seed <s>', 'generation seed', '1')
    .option('--json', 'print JSON: {rooms, deadEnds, shortestPathMoves, fullDfsMoves, exitDoorAtFirstFork, ...}')
    .action((name: string, options: { depth: string; seed: string; json?: boolean }) => {
      if (name !== 'exploration') throw new ConfigError(`task inspect knows the exploration task only, got "${name}"`);
      const depth = parseIntegerFlag('--depth', options.depth, 1);
      if (depth > 6) throw new ConfigError(`--depth must be at most 6 (a depth-${depth} tree has millions of rooms)`);
      const facts = inspectTree(generateTree({ depth, rng: createRng(options.seed) }));
      if (options.json) {
        process.stdout.write(JSON.stringify(facts) + '\n');
        return;
      }
      process.stdout.write(
        [
          `exploration tree, depth ${facts.depth}, seed ${options.seed}`,
          `rooms                   ${facts.rooms}`,
          `dead ends               ${facts.deadEnds}`,
          `shortest path (moves)   ${facts.shortestPathMoves}`,
          `full DFS (moves)        ${facts.fullDfsMoves}`,
          `exit door at 1st fork   ${facts.exitDoorAtFirstFork} (0-based, in listed order)`,
          `start → exit            ${facts.start} → ${facts.exit}`,
        ].join('\n') + '\n',
      );
    });
}
