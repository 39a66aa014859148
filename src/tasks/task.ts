// The Task interface: what a researcher implements to add a task to s³. A task owns its problems and
// splits, its prompts, its own tools and its grader; it knows nothing about the harness, the policy
// or training. The harness adds only the messaging tools (prompts/message-tools.ts) and the harness
// rules (prompts/harness-rules.ts) when it builds an agent's context.
//
// Lifecycle of one team attempt, as the harness drives it:
//   1. task.createEpisode({problem, agentNames, communication, rng, ...}) once per attempt;
//   2. per agent: systemPrompt(i), firstUserMessage(i), toolSpecs() build the initial context;
//   3. every complete call of a task tool goes to callTool({agentIndex, name, args}); the output text
//      is shown to the model, endsEpisode stops the whole team;
//   4. for tasks with a final answer (finalPrompt(i) is not null), each answer that begins with ####
//      is passed to gradeAnswer({agentIndex, text}), which also records it;
//   5. agentSucceeded(i) and teamSucceeded() give the outcome used for rewards and metrics.
//
// Besides its episodes a task carries every fact the rest of the system asks about it: its title, its
// paper defaults (allowances, context, evaluation temperature; read by the harness, the evaluation
// protocol and the presets), its scripted demonstrator (SFT demonstrations, `--policy scripted`) and
// metrics of its own (TaskMetric, measured on an EpisodeView of each finished evaluation episode).
// Nothing outside tasks/ branches on a task's name; a user's task is a module that exports one
// (docs/tasks.md, load-task.ts).

import type { Rng } from '../common/random.js';
import type { ToolSpec } from '../common/tool-spec.js';
import type { Script } from '../policy/scripted/scripted-policy.js';

/**
 * The wording of the prompts and tool descriptions: 'paper' is Appendix G and Table 2 verbatim;
 * 'compact' (ours, not the paper's) keeps the chat format, tool names, arguments, outputs and the
 * first user turn's facts but shortens the prose, so a tiny model trains on a CPU in minutes.
 */
export type PromptStyle = 'paper' | 'compact';

/** Every prompt style; 'paper' is the default. */
export const PROMPT_STYLES: readonly PromptStyle[] = ['paper', 'compact'];

/** The three fixed problem sets of a task (Appendix H: train, development, held-out evaluation). */
export type Split = 'train' | 'dev' | 'eval';

/** Every split, in the order they are listed. */
export const SPLITS: readonly Split[] = ['train', 'dev', 'eval'];

/** What every problem has; tasks add their own fields. */
export interface TaskProblem {
  /** Stable identifier, unique across all splits of a task, e.g. "aggregation/eval/0007". */
  readonly id: string;
}

/** Where to find (or create) a task's split files. */
export interface LoadProblemsOptions {
  /** Which problem set to load. */
  readonly split: Split;
  /** Directory of the split files; default: $S3_DATA_DIR, else ~/.cache/s3-swarm/splits/v1. */
  readonly dataDir?: string;
}

/** One call of a task tool, as parsed from an agent's output. */
export interface ToolCallRequest {
  /** Index of the calling agent in agentNames. */
  readonly agentIndex: number;
  /** The tool name the model wrote. */
  readonly name: string;
  /** The arguments the model wrote, unvalidated (any JSON value, or undefined when absent). */
  readonly args: unknown;
}

/** A trace event a tool call produced, e.g. {type: "move", from: "R1", to: "R2", exit: false}. */
export type TaskEvent = Readonly<Record<string, string | number | boolean | null>> & { readonly type: string };

/** The result of a tool call; callTool never throws on anything the model wrote. */
export interface ToolResult {
  /** False when the call was rejected (unknown tool, bad arguments, impossible action). */
  readonly ok: boolean;
  /** JSON text shown to the model as the tool output (an {"error": ...} object when ok is false). */
  readonly output: string;
  /** True when this call ends the episode for the whole team (exploration: reaching the exit). */
  readonly endsEpisode?: boolean;
  /** What happened, for traces and metrics; absent for rejected calls. */
  readonly event?: TaskEvent;
}

/** A final answer handed to the grader. */
export interface GradeAnswerOptions {
  /** Index of the answering agent. */
  readonly agentIndex: number;
  /** The agent's visible answer text (reasoning removed); its answer line begins with ####. */
  readonly text: string;
}

/** Everything a task needs to set up one team attempt. */
export interface CreateEpisodeOptions<P extends TaskProblem> {
  /** The problem to solve. */
  readonly problem: P;
  /** The names of the N agents (sampled by the harness); N is its length. */
  readonly agentNames: readonly string[];
  /** Whether messaging is on; when off, messaging text is removed from every prompt. */
  readonly communication: boolean;
  /** The stream the episode draws from (each agent's shuffled teammate order). */
  readonly rng: Rng;
  /** Tokens each agent may generate in the work phase (shown to the model where the prompt states it). */
  readonly workAllowance: number;
  /** Context window of each agent in tokens (shown to the model where the prompt states it). */
  readonly contextLimit: number;
  /** Token-cost weight λ stated in the prompt; 0 states that there is no length reward. */
  readonly tokenCostWeight: number;
  /** The wording of the prompts and task tools (default 'paper'; 'compact' is ours). */
  readonly promptStyle?: PromptStyle;
}

/** One team attempt at one problem: prompts, per-agent tool state and grading. */
export interface TaskEpisode {
  /** N, the number of agents. */
  readonly agentCount: number;
  /** The names of the agents, by index. */
  readonly agentNames: readonly string[];
  /** Agent agentIndex's teammates, in that agent's own shuffled order (empty without messaging). */
  teammates(agentIndex: number): readonly string[];
  /** The task's system prompt for an agent (the harness appends its harness rules). */
  systemPrompt(agentIndex: number): string;
  /** The first user turn of an agent. */
  firstUserMessage(agentIndex: number): string;
  /** The task's own tools (messaging tools are the harness's); may be empty. */
  toolSpecs(): readonly ToolSpec[];
  /** Executes one call of a task tool; never throws on bad names or arguments. */
  callTool(request: ToolCallRequest): ToolResult;
  /** The prompt that asks an agent for its final answer, or null when the task takes none. */
  finalPrompt(agentIndex: number): string | null;
  /** Grades and records an agent's final answer (a later call replaces it); always false where actions, not text, are graded. */
  gradeAnswer(options: GradeAnswerOptions): boolean;
  /** Whether this agent solved the task (correct recorded answer, or reached the goal). */
  agentSucceeded(agentIndex: number): boolean;
  /** Whether at least one agent succeeded. */
  teamSucceeded(): boolean;
}

/** The paper's two tasks, whose own metrics an evaluation computes. */
export type TaskFamily = 'aggregation' | 'exploration';

/** A task's defaults, the paper's numbers where the paper gives them (cite the table beside each value). */
export interface TaskDefaults {
  /** Tokens each agent may generate in the work phase (L). */
  readonly workAllowance: number;
  /** Tokens reserved for each agent's final answer (1 where the task takes none). */
  readonly finalAllowance: number;
  /** Each agent's context window in tokens. */
  readonly contextLimit: number;
  /** The sampling temperature of evaluations (Appendix M). */
  readonly evaluationTemperature: number;
}

/** A task's scripted agents: `--policy scripted` and the SFT demonstrations. */
export interface TaskDemonstrator {
  /** The script every agent runs (policy/scripted: it reads only its own context items). */
  readonly script: Script;
  /** What the script does, as summaries describe the policy. */
  readonly description: string;
  /** The task SFT demonstrations are collected on, when not this one (exploration: Appendix L's depth-2 trees). */
  readonly demonstrationTask?: Task;
}

/** One delivered message of a finished episode, as a task metric sees it. */
export interface EpisodeViewMessage {
  /** The message's id on the episode's board (what reads refer to). */
  readonly id: number;
  /** The sender's name. */
  readonly from: string;
  /** Who it was delivered to (every teammate for a broadcast). */
  readonly recipients: readonly string[];
  /** The text the sender wrote. */
  readonly text: string;
  /** The text the recipients read (differs from `text` only under a message ablation, `swarm eval --messages`). */
  readonly deliveredText: string;
  /** Position of the send among the episode's events (comparable with every other `at`). */
  readonly at: number;
  /** Each read of it by a recipient, in order (an agent reads a message at most once). */
  readonly reads: readonly { readonly agent: string; readonly at: number }[];
}

/**
 * What a task metric sees of a finished episode: the team, its messages and who read them, the task's
 * own tool events, the final answers and the outcome, in one event order (`at`). It is built from the
 * episode's trace by the evaluation, so a task measures its episodes without knowing the trace format.
 */
export interface EpisodeView {
  /** The agents' names, by index. */
  readonly agentNames: readonly string[];
  /** Whether messaging was on. */
  readonly communication: boolean;
  /** Every delivered message, in send order. */
  readonly messages: readonly EpisodeViewMessage[];
  /** Every task tool call that did something (ToolResult.event), in order. */
  readonly taskEvents: readonly { readonly agent: string; readonly event: TaskEvent; readonly at: number }[];
  /** Every final answer (the text after ####, null for none), in order; an agent may answer more than once. */
  readonly answers: readonly { readonly agent: string; readonly answer: string | null; readonly correct: boolean; readonly at: number }[];
  /** Each agent's own success, by index. */
  readonly agentSuccess: readonly boolean[];
  /** Whether the team succeeded. */
  readonly teamSuccess: boolean;
  /** Tokens generated by the whole team. */
  readonly totalTokens: number;
}

/**
 * A metric a task brings: one number per episode, which `swarm eval` records per episode, averages
 * per seed (episodes where it is null are skipped) and reports as mean ± SE over seeds per team size,
 * under summary.json's `taskMetrics`, in the printed table and in the report.
 */
export interface TaskMetric<P extends TaskProblem = TaskProblem> {
  /** Key in summaries, camelCase (letters and digits), unique within the task. */
  readonly name: string;
  /** Short name for tables and plots. */
  readonly label: string;
  /** 'fraction': a share in [0, 1]; 'nonNegative': an amount ≥ 0. */
  readonly range: 'fraction' | 'nonNegative';
  /** Shown as percent (a fraction only). */
  readonly percent?: boolean;
  /** Measured only when messaging is on (it is about messages). */
  readonly messagingOnly?: boolean;
  /** The episode's value, or null where the metric is undefined for it. Must be pure. */
  measure(episode: EpisodeView, problem: P): number | null;
}

/** A task: its problems, how to run an episode on one of them, and what the system needs to know about it. */
export interface Task<P extends TaskProblem = TaskProblem> {
  /** Registry name, e.g. "aggregation"; a loaded module's task must not reuse a built-in name. */
  readonly name: string;
  /** What reports call it, e.g. "Information aggregation". */
  readonly title: string;
  /** Allowances, context and evaluation temperature. */
  readonly defaults: TaskDefaults;
  /** Its scripted agents, if it has any. */
  readonly demonstrator?: TaskDemonstrator;
  /**
   * Which of the paper's tasks its episodes are measured as (the aggregation structures and
   * number-sharing shares, or exploration's room overlap, claims and success by exit door); absent:
   * the task-independent metrics only.
   */
  readonly family?: TaskFamily;
  /** Metrics of its own, measured on every evaluation episode besides the task-independent ones (and the family's). */
  readonly metrics?: readonly TaskMetric<P>[];
  /** Loads a split, generating and writing its file on first use. */
  loadProblems(options: LoadProblemsOptions): Promise<readonly P[]>;
  /** Sets up one team attempt; throws ConfigError when the options do not fit the problem. */
  createEpisode(options: CreateEpisodeOptions<P>): TaskEpisode;
}
