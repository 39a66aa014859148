// The tasks layer's public surface and the task registry: getTask(name) returns a built-in or loaded
// Task by the name the command line and configs use; loadTask(reference) also imports a user's task
// module (`--task ./my-task.js`, load-task.ts) and registers it under its name. Other layers import
// tasks from here.

import path from 'node:path';
import { ConfigError } from '../errors.js';
import { aggregationDigitsTask, aggregationTask } from './aggregation/task.js';
import { explorationDemonstrationTask, explorationTask } from './exploration/task.js';
import { importTaskModule, isTaskModulePath } from './load-task.js';
import type { Task, TaskDemonstrator, TaskFamily } from './task.js';

/** Names of the registered tasks. */
export type TaskName = 'aggregation' | 'aggregation-digits' | 'exploration' | 'exploration-d2';

const REGISTRY: Readonly<Record<TaskName, Task>> = {
  aggregation: aggregationTask,
  'aggregation-digits': aggregationDigitsTask,
  exploration: explorationTask,
  'exploration-d2': explorationDemonstrationTask,
};

/** Every built-in task name. */
export const TASK_NAMES = Object.keys(REGISTRY) as readonly TaskName[];

// Tasks imported from modules, by name and by the absolute path they came from.
const loaded = new Map<string, Task>();
const loadedFrom = new Map<string, Task>();

/** The task registered under `name` (built-in, or loaded with loadTask), or undefined. */
export function findTask(name: string): Task | undefined {
  return Object.hasOwn(REGISTRY, name) ? REGISTRY[name as TaskName] : loaded.get(name);
}

/** The task registered under `name`; throws ConfigError listing the known names otherwise. */
export function getTask(name: string): Task {
  const task = findTask(name);
  if (task === undefined) {
    throw new ConfigError(`Unknown task ${JSON.stringify(name)}; expected one of: ${[...TASK_NAMES, ...loaded.keys()].join(', ')}, or a task module's path (./my-task.js).`);
  }
  return task;
}

/** The paper task whose metrics the task named `name` follows (Task.family); null for a task that declares none or is not loaded. */
export function taskFamily(name: string): TaskFamily | null {
  return findTask(name)?.family ?? null;
}

/** The task's scripted demonstrator; throws ConfigError naming the task when it has none. */
export function demonstratorOf(task: Task): TaskDemonstrator {
  if (task.demonstrator === undefined) throw new ConfigError(`Task "${task.name}" has no scripted demonstrator (Task.demonstrator); use a model (--model DIR) instead.`);
  return task.demonstrator;
}

/**
 * A built-in task by name, or the task a module exports (`reference` is a path: see load-task.ts),
 * registered under its name so getTask finds it from then on. Loading the same file again returns the
 * same task; another module under a name already loaded is refused.
 */
export async function loadTask(reference: string): Promise<Task> {
  if (!isTaskModulePath(reference)) return getTask(reference);
  const absolute = path.resolve(reference);
  const known = loadedFrom.get(absolute);
  if (known !== undefined) return known;
  const task = await importTaskModule(reference, TASK_NAMES);
  if (loaded.has(task.name)) throw new ConfigError(`--task ${reference}: another module already registered a task named "${task.name}".`);
  loaded.set(task.name, task);
  loadedFrom.set(absolute, task);
  return task;
}

export { checkTask, isTaskModulePath } from './load-task.js';
export type {
  CreateEpisodeOptions,
  GradeAnswerOptions,
  LoadProblemsOptions,
  PromptStyle,
  Split,
  Task,
  TaskDefaults,
  TaskDemonstrator,
  TaskEpisode,
  TaskFamily,
  TaskEvent,
  TaskMetric,
  TaskProblem,
  EpisodeView,
  EpisodeViewMessage,
  ToolCallRequest,
  ToolResult,
} from './task.js';
export { PROMPT_STYLES, SPLITS } from './task.js';
export { createRng, Rng, type RngSeed } from '../common/random.js';
export { createRoster, type CreateRosterOptions, type Roster } from './roster.js';
export { toolError } from './tool-error.js';
export {
  BROADCAST_RECIPIENT,
  CHECK_NOTIFICATIONS_TOOL,
  COMPACT_MESSAGE_TOOLS,
  MESSAGE_TOOL,
  MESSAGE_TOOL_NAMES,
  MESSAGE_TOOLS,
  messageTools,
  READ_MESSAGES_TOOL,
} from './prompts/message-tools.js';
export {
  COMPACT_HARNESS_RULES,
  COMPACT_HARNESS_RULES_NO_COMMUNICATION,
  harnessRules,
  IDLENESS_RULES,
  IDLENESS_RULES_NO_COMMUNICATION,
  NOTIFICATION_RULES,
  type HarnessRulesOptions,
} from './prompts/harness-rules.js';
export { COLLABORATION_PROMPT } from './prompts/collaboration.js';
export {
  DATA_DIR_ENV,
  AGGREGATION_MAX_NUMBERS,
  DATASETS,
  defaultDataDir,
  generateAggregationSplit,
  generateExplorationSplit,
  loadAggregationSplit,
  loadExplorationSplit,
  SPLIT_SEEDS,
  SPLIT_SIZES,
  splitFilePath,
  type AggregationDatasetName,
  type DatasetName,
  type LoadSplitOptions,
  type SplitRef,
} from './splits.js';
export { aggregationDigitsTask, aggregationTask } from './aggregation/task.js';
export { aggregatorScript, numberBroadcastText, readStatedNumber } from './aggregation/demonstrator.js';
export { createAggregationEpisode } from './aggregation/episode.js';
export { numberToWords, wordsToNumber, capitalizedNumberWords } from './aggregation/number-words.js';
export { expectedAnswer, gradeAggregationAnswer, parseFinalAnswer, ANSWER_MARKER } from './aggregation/grading.js';
export {
  DIGITS_MAX_NUMBER,
  generateAggregationProblem,
  HELD_OUT_PROBLEM_NUMBERS,
  TRAIN_PROBLEM_NUMBERS,
  type AggregationProblem,
} from './aggregation/problem.js';
export { aggregationFinalPrompt } from './aggregation/prompts.js';
export { explorationDemonstrationTask, explorationTask } from './exploration/task.js';
export { explorerScript } from './exploration/demonstrator.js';
export { branchKey, claimText, readExplorerNews, reportText, type BranchName, type ExplorerNews } from './exploration/demonstrator-messages.js';
export { createExplorationEpisode } from './exploration/episode.js';
export { generateTree, labelDigits, treeRoomCount, TREE_BRANCHING, TREE_CORRIDOR_LENGTH, type ExplorationTree } from './exploration/tree.js';
export { treeFromJson, treeToJson, treeShapeProblem, type ExplorationTreeJson } from './exploration/tree-json.js';
export {
  branchHoldsExit,
  branchRooms,
  exitPath,
  firstForkBranch,
  isFork,
  onwardDoors,
  pathFromStart,
  roomsInPreorder,
  wayBack,
  type BranchRef,
} from './exploration/tree-index.js';
export { exitDoorPositions, inspectTree, orderedDfsMovesToExit, type TreeFacts } from './exploration/inspect.js';
export { observeRoom } from './exploration/observation.js';
export { COMPACT_EXPLORATION_TOOLS, EXPLORATION_TOOLS, explorationTools, LOOK_TOOL, MOVE_TOOL } from './exploration/tools.js';
export type { ExplorationProblem } from './exploration/problem.js';
