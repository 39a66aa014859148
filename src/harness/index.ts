// The harness layer's public surface: running team attempts (runEpisode), the trace format, the
// message board and notifications, and the paper's episode settings.

export { AGENT_NAME_POOL, sampleAgentNames } from './agent-names.js';
export type { AgentPhase, WakeReason } from './agent-loop.js';
export { ContextRenderer } from './context-renderer.js';
export type { OutputBlock } from './context-renderer.js';
export { agentAllowance, resolveEpisodeSettings, TOKEN_COST_WEIGHT, TRAINING_TEMPERATURE } from './episode-settings.js';
export type { EpisodeSettingsOverrides } from './episode-settings.js';
export { MessageBoard, READ_BATCH_SIZE } from './message-board.js';
export type { PostedMessage, PostOptions } from './message-board.js';
export { notificationNotice, notificationOutput } from './notification.js';
export { runEpisode } from './run-episode.js';
export type { AgentResult, EpisodeResult, RunEpisodeOptions } from './run-episode.js';
export { stopTokensOf } from './stop-tokens.js';
export type { StopTokens } from './stop-tokens.js';
export { parseTrace, readTrace, splitEpisodes, traceToJsonl, writeTrace } from './trace.js';
export type { EpisodeTrace } from './trace.js';
export { TRACE_VERSION } from './trace-events.js';
export type {
  AgentTokens,
  CutCallEvent,
  EpisodeEndEvent,
  EpisodeEndReason,
  EpisodeSettings,
  EpisodeStartEvent,
  FinalAnswerEvent,
  IdleEvent,
  MessageEvent,
  NotificationEvent,
  PhaseEvent,
  PhaseReason,
  PieceEvent,
  PromptEvent,
  ReadEvent,
  TaskEventRecord,
  ToolCallEvent,
  TraceEvent,
  TracedFinish,
  WakeEvent,
} from './trace-events.js';
