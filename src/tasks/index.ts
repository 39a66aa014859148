// The tasks layer's public surface and the task registry: getTask(name) returns a Task by the name the
// command line and configs use. Other layers import tasks from here.

import { ConfigError } from '../errors.js';
import { aggregationDigitsTask, aggregationTask } from './aggregation/task.js';
import { explorationDemonstrationTask, explorationTask } from './exploration/task.js';
import type { Task } from './task.js';

/** Names of the registered tasks. */
export type TaskName = 'aggregation' | 'aggregation-digits' | 'exploration' | 'exploration-d2';

const REGISTRY: Readonly<Record<TaskName, Task>> = {
  aggregation: aggregationTask,
  'aggregation-digits': aggregationDigitsTask,
  exploration: explorationTask,
  'exploration-d2': explorationDemonstrationTask,
};

/** Every registered task name. */
export const TASK_NAMES = Object.keys(REGISTRY) as readonly TaskName[];

/** The task registered under `name`; throws ConfigError listing the known names otherwise. */
export function getTask(name: string): Task {
  if (!Object.hasOwn(REGISTRY, name)) {
    throw new ConfigError(`Unknown task ${JSON.stringify(name)}; expected one of: ${TASK_NAMES.join(', ')}.`);
  }
  return REGISTRY[name as TaskName];
}

export type {
  CreateEpisodeOptions,
  GradeAnswerOptions,
  LoadProblemsOptions,
  PromptStyle,
  Split,
  Task,
  TaskEpisode,
  TaskEvent,
  TaskProblem,
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
export { aggregationDigitsTask, aggregationTask, isAggregationTask } from './aggregation/task.js';
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
export { createExplorationEpisode } from './exploration/episode.js';
export { generateTree, labelDigits, treeRoomCount, TREE_BRANCHING, TREE_CORRIDOR_LENGTH, type ExplorationTree } from './exploration/tree.js';
export { treeFromJson, treeToJson, treeShapeProblem, type ExplorationTreeJson } from './exploration/tree-json.js';
export {
  branchHoldsExit,
  branchRooms,
  distanceFromStart,
  exitPath,
  firstForkBranch,
  hasRoom,
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
