// `swarm task inspect TASK [--json]`: what the system knows about a task (built-in or a module path):
// its title, family, defaults, demonstrator and own metrics; `--split S [--problem I]` also loads a
// split and prints its size or one problem. For a task of the exploration family it prints the facts of
// one generated tree instead (`--depth D --seed S`; Table 3: rooms, dead ends, shortest-path and
// full-DFS moves, the exit's door at the first fork); its text output shows both.
import type { Command } from 'commander';
import { createRng, generateTree, inspectTree, loadTask, SPLITS, type Split, type Task } from '../tasks/index.js';
import { ConfigError } from '../errors.js';
import { parseIntegerFlag } from './options.js';

interface InspectFlags {
  depth?: string;
  seed?: string;
  split?: string;
  problem?: string;
  json?: boolean;
}

/** The facts of a task the command prints (functions left out). */
function taskFacts(task: Task): Record<string, unknown> {
  return {
    name: task.name,
    title: task.title,
    family: task.family ?? null,
    defaults: task.defaults,
    demonstrator: task.demonstrator?.description ?? null,
    metrics: (task.metrics ?? []).map((metric) => ({ name: metric.name, label: metric.label, range: metric.range, percent: metric.percent === true, messagingOnly: metric.messagingOnly === true })),
  };
}

function treeFacts(flags: InspectFlags): ReturnType<typeof inspectTree> {
  const depth = parseIntegerFlag('--depth', flags.depth ?? '3', 1);
  if (depth > 6) throw new ConfigError(`--depth must be at most 6 (a depth-${depth} tree has millions of rooms)`);
  return inspectTree(generateTree({ depth, rng: createRng(flags.seed ?? '1') }));
}

function treeLines(facts: ReturnType<typeof inspectTree>, seed: string): string[] {
  return [
    `exploration tree, depth ${facts.depth}, seed ${seed}`,
    `rooms                   ${facts.rooms}`,
    `dead ends               ${facts.deadEnds}`,
    `shortest path (moves)   ${facts.shortestPathMoves}`,
    `full DFS (moves)        ${facts.fullDfsMoves}`,
    `exit door at 1st fork   ${facts.exitDoorAtFirstFork} (0-based, in listed order)`,
    `start → exit            ${facts.start} → ${facts.exit}`,
  ];
}

function describeLines(facts: Record<string, unknown>, task: Task): string[] {
  const d = task.defaults;
  return [
    `${task.name}: ${task.title}`,
    `family                  ${task.family ?? 'none (task-independent metrics only)'}`,
    `allowance (work+final)  ${d.workAllowance} + ${d.finalAllowance} tokens per agent`,
    `context                 ${d.contextLimit} tokens`,
    `eval temperature        ${d.evaluationTemperature}`,
    `demonstrator            ${facts.demonstrator ?? 'none'}`,
    `own metrics             ${(task.metrics ?? []).map((m) => `${m.name} (${m.label}${m.messagingOnly === true ? ', messaging only' : ''})`).join(', ') || 'none'}`,
  ];
}

async function problemFacts(task: Task, flags: InspectFlags): Promise<Record<string, unknown> | null> {
  if (flags.split === undefined) {
    if (flags.problem !== undefined) throw new ConfigError('--problem needs --split (train, dev or eval)');
    return null;
  }
  if (!SPLITS.includes(flags.split as Split)) throw new ConfigError(`--split must be one of ${SPLITS.join(', ')}, got "${flags.split}"`);
  const problems = await task.loadProblems({ split: flags.split as Split });
  if (flags.problem === undefined) return { split: flags.split, count: problems.length, firstId: problems[0]?.id ?? null };
  const index = parseIntegerFlag('--problem', flags.problem, 0);
  if (index >= problems.length) throw new ConfigError(`--problem must be below the split's ${problems.length} problems, got ${index}`);
  return { split: flags.split, index, problem: problems[index] };
}

/** Registers `swarm task inspect`. */
export function registerTask(program: Command): void {
  const command = program.command('task').description('inspect the tasks and their problems');
  command
    .command('inspect')
    .description("print what the system knows about a task; for the exploration family, a generated tree's facts")
    .argument('<task>', 'a built-in task name or a task module path (./my-task.mjs)')
    .option('--depth <d>', 'exploration family: tree depth (2: SFT demonstrations, 3: RL and evaluation; default 3)')
    .option('--seed <s>', 'exploration family: generation seed (default 1)')
    .option('--split <split>', 'also load this split (train, dev, eval) and print its size')
    .option('--problem <i>', 'with --split: print problem i (0-based) of the split')
    .option('--json', 'print JSON: the tree facts for the exploration family, else {name, title, family, defaults, demonstrator, metrics[, split]}')
    .action(async (reference: string, flags: InspectFlags) => {
      const task = await loadTask(reference);
      const exploration = task.family === 'exploration';
      if (!exploration && (flags.depth !== undefined || flags.seed !== undefined)) {
        throw new ConfigError(`--depth and --seed generate exploration trees; task "${task.name}" is not of the exploration family`);
      }
      const facts = taskFacts(task);
      const tree = exploration ? treeFacts(flags) : null;
      const split = await problemFacts(task, flags);
      if (flags.json) {
        process.stdout.write(JSON.stringify(tree ?? { ...facts, ...(split === null ? {} : { split }) }) + '\n');
        return;
      }
      const lines = [...describeLines(facts, task)];
      if (split !== null) lines.push(`split                   ${JSON.stringify(split)}`);
      if (tree !== null) lines.push('', ...treeLines(tree, flags.seed ?? '1'));
      process.stdout.write(lines.join('\n') + '\n');
    });
}
