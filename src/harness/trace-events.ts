// The events of an episode trace (docs/trace-format.md, traceVersion 1): what happened, in the order
// the harness saw it, with no wall-clock times, so one seed always gives the same trace. Agents are
// named as in the episode; agentNames in episode_start maps names to indexes. Enough to replay an
// episode's logic and to compute every metric of Appendix M (message graph, room overlap, structure
// classes, reads before first send, claims and reports).

import type { JsonValue } from '../common/json-dumps.js';
import type { PromptStyle, TaskEvent } from '../tasks/task.js';

/** The trace schema version written into every episode_start. */
export const TRACE_VERSION = 1;

/** The settings an episode ran with. */
export interface EpisodeSettings {
  /** Tokens each agent may generate in the work phase (L). */
  readonly workAllowance: number;
  /** Tokens reserved for each agent's final answer. */
  readonly finalAllowance: number;
  /** Each agent's context window in tokens. */
  readonly contextLimit: number;
  /** Most new tokens per generation request (1,024). */
  readonly generationPieceTokens: number;
  /** Sampling temperature. */
  readonly temperature: number;
  /** K extra draws per position requested from the policy (0 for none). */
  readonly draws: number;
  /** Token-cost weight λ stated in prompts. */
  readonly tokenCostWeight: number;
  /** The prompt wording; absent for the paper's (Appendix G), so paper traces are unchanged. */
  readonly promptStyle?: PromptStyle;
  /** A message ablation (`swarm eval --messages`, message-channel.ts) as written; absent for the intact channel. */
  readonly messages?: string;
  /** false: Qwen3's thinking mode off (an empty reasoning block pre-filled in every generation prompt); absent when on. */
  readonly thinking?: false;
}

/** How a piece ended, as traced: the chat format's finish, or cancelled by the episode's end. */
export type TracedFinish = 'tool_call' | 'end' | 'length' | 'context' | 'cancelled';

/** Why an agent's phase changed. */
export type PhaseReason = 'answered' | 'allowance' | 'context' | 'all_idle' | 'asked' | 'exit' | 'aborted';

/** Why the episode ended: an agent reached the exit, every agent was done, or it was aborted. */
export type EpisodeEndReason = 'exit' | 'finished' | 'aborted';

/** The first event of every episode. */
export interface EpisodeStartEvent {
  readonly type: 'episode_start';
  readonly traceVersion: typeof TRACE_VERSION;
  /** Task name. */
  readonly task: string;
  /** Problem id. */
  readonly problemId: string;
  /** N. */
  readonly n: number;
  /** Agent names by index. */
  readonly agentNames: readonly string[];
  /** Each agent's teammates in its own order (empty lists without messaging). */
  readonly teammates: readonly (readonly string[])[];
  /** The episode seed. */
  readonly seed: string;
  /** Each agent's sampling seed (decimal). */
  readonly samplingSeeds: readonly string[];
  /** Whether messaging was on. */
  readonly communication: boolean;
  /** The settings. */
  readonly settings: EpisodeSettings;
}

/** An agent's opening prompt was appended. */
export interface PromptEvent {
  readonly type: 'prompt';
  readonly agent: string;
  /** Tokens of the prompt. */
  readonly tokens: number;
}

/** One generation piece. */
export interface PieceEvent {
  readonly type: 'piece';
  readonly agent: string;
  /** Work phase or final-answer phase. */
  readonly phase: 'work' | 'final';
  /** Index of the piece's first token in the agent's sequence. */
  readonly position: number;
  /** The sampled ids. */
  readonly tokens: readonly number[];
  /** Their decoded text (unknown ids as U+FFFD). */
  readonly text: string;
  /** How the piece ended. */
  readonly finish: TracedFinish;
  /** The weights version, null when the policy has none. */
  readonly policyVersion: number | null;
}

/** A complete tool call and what the agent read back. */
export interface ToolCallEvent {
  readonly type: 'tool_call';
  readonly agent: string;
  /** Episode-wide call id, 0, 1, … */
  readonly callId: number;
  /** The tool name; null when the call could not be parsed. */
  readonly name: string | null;
  /** The arguments as written; null when unparsed. */
  readonly arguments: { readonly [key: string]: JsonValue } | null;
  /** Whether it ran. */
  readonly ok: boolean;
  /** The output the agent read (an {"error": ...} object when ok is false). */
  readonly output: string;
}

/** A tool call left open when the turn closed: not executed. */
export interface CutCallEvent {
  readonly type: 'cut_call';
  readonly agent: string;
  /** The partial call text. */
  readonly text: string;
}

/** A message was posted and delivered. */
export interface MessageEvent {
  readonly type: 'message';
  /** The sender. */
  readonly agent: string;
  readonly callId: number;
  /** Board-wide message id. */
  readonly messageId: number;
  /** The recipient as written ("all" or a name). */
  readonly to: string;
  /** Everyone it reached (under a delaying channel: reaches once the delay has passed). */
  readonly recipients: readonly string[];
  readonly text: string;
  /** Message ablations (message-channel.ts), only where the channel changed something: whom the sender addressed, */
  readonly addressed?: readonly string[];
  /** the text the recipients read, */
  readonly deliveredText?: string;
  /** and the team pieces its arrival waited. */
  readonly delayPieces?: number;
}

/** A read_messages call returned these messages (and marked them read). */
export interface ReadEvent {
  readonly type: 'read';
  readonly agent: string;
  readonly callId: number;
  readonly messageIds: readonly number[];
}

/** A notification was appended to an agent's context. */
export interface NotificationEvent {
  readonly type: 'notification';
  readonly agent: string;
  readonly unreadBySender: { readonly [sender: string]: number };
}

/** A task tool's event, e.g. {"type": "move", "from": "R1", "to": "R2", "exit": false}. */
export interface TaskEventRecord {
  readonly type: 'task_event';
  readonly agent: string;
  readonly callId: number;
  readonly event: TaskEvent;
}

/** An agent ended a response without a call or answer and waits. */
export interface IdleEvent {
  readonly type: 'idle';
  readonly agent: string;
}

/** A message woke an idle agent (its notification follows). */
export interface WakeEvent {
  readonly type: 'wake';
  readonly agent: string;
}

/** An agent's work phase ended: it is asked for a final answer, or it is done. */
export interface PhaseEvent {
  readonly type: 'phase';
  readonly agent: string;
  readonly phase: 'final' | 'done';
  readonly reason: PhaseReason;
}

/** An agent's final answer (null when it gave none when asked). */
export interface FinalAnswerEvent {
  readonly type: 'final_answer';
  readonly agent: string;
  readonly phase: 'work' | 'final';
  /** The text after ####, trimmed; null for no answer. */
  readonly answer: string | null;
  readonly correct: boolean;
}

/** Tokens an agent generated. */
export interface AgentTokens {
  readonly agent: string;
  /** Work-phase tokens. */
  readonly work: number;
  /** Final-phase tokens. */
  readonly final: number;
}

/** The last event of every episode. */
export interface EpisodeEndEvent {
  readonly type: 'episode_end';
  readonly reason: EpisodeEndReason;
  readonly teamSuccess: boolean;
  /** Each agent's own success, by index. */
  readonly agentSuccess: readonly boolean[];
  /** Tokens generated per agent, by index. */
  readonly tokens: readonly AgentTokens[];
  /** Tokens generated by the whole team. */
  readonly totalTokens: number;
}

/** Any trace event. */
export type TraceEvent =
  | EpisodeStartEvent
  | PromptEvent
  | PieceEvent
  | ToolCallEvent
  | CutCallEvent
  | MessageEvent
  | ReadEvent
  | NotificationEvent
  | TaskEventRecord
  | IdleEvent
  | WakeEvent
  | PhaseEvent
  | FinalAnswerEvent
  | EpisodeEndEvent;
