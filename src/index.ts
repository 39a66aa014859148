// s3-swarm as a library: what a researcher scripts against, one import away (`import { runEpisode }
// from 's3-swarm'`). Tasks (the Task interface, the built-in tasks, the helpers a task module uses),
// policies (the Policy interface, the native engine's, scripted ones), episodes, evaluation, the
// training pipeline and its config, and the native inference engine and trainer. docs/api.md walks
// through it; the command line (`swarm`) is built on exactly these.

// Tasks and writing one.
export {
  aggregationDigitsTask,
  aggregationTask,
  checkTask,
  createRoster,
  demonstratorOf,
  explorationDemonstrationTask,
  explorationTask,
  findTask,
  getTask,
  loadTask,
  PROMPT_STYLES,
  SPLITS,
  TASK_NAMES,
  toolError,
  type CreateEpisodeOptions,
  type CreateRosterOptions,
  type EpisodeView,
  type EpisodeViewMessage,
  type GradeAnswerOptions,
  type LoadProblemsOptions,
  type PromptStyle,
  type Roster,
  type Split,
  type Task,
  type TaskDefaults,
  type TaskDemonstrator,
  type TaskEpisode,
  type TaskEvent,
  type TaskFamily,
  type TaskMetric,
  type TaskProblem,
  type ToolCallRequest,
  type ToolResult,
} from './tasks/index.js';
export { createRng, Rng, type RngSeed } from './common/random.js';
export type { ToolSpec, ToolParameters } from './common/tool-spec.js';

// Policies.
export {
  AgentSequence,
  GarbagePolicy,
  MAX_PIECE_TOKENS,
  PolicyError,
  ScriptedPolicy,
  TOKEN_ROLES,
  type ContextItem,
  type GenerateOptions,
  type GenerateResult,
  type Policy,
  type PromptItem,
  type Script,
  type ScriptedAction,
  type ScriptedAgent,
  type ScriptStartOptions,
  type TokenRole,
} from './policy/index.js';
export { NativePolicy, type NativePolicyOptions } from './policy/native-policy.js';
export { connectPolicy, openPolicy, type OpenedPolicy, type PolicyInfo, type PolicySpec, type RemotePolicySpec } from './policy/open-policy.js';
export { describeServer, REMOTE_PROTOCOLS, RemotePolicy, type RemotePolicyOptions, type RemoteProtocol, type RemoteServerInfo } from './policy/remote-policy.js';
export { InferenceServer, type InferenceServerOptions } from './serve/inference-server.js';
export { Tokenizer } from './model/tokenizer/index.js';
export { loadBuiltinTokenizer } from './model/s3-mini-tokenizer.js';

// Episodes.
export {
  agentAllowance,
  readTrace,
  resolveEpisodeSettings,
  runEpisode,
  writeTrace,
  type AgentResult,
  type EpisodeResult,
  type EpisodeSettings,
  type EpisodeSettingsOverrides,
  type RunEpisodeOptions,
  type TraceEvent,
} from './harness/index.js';

// Evaluation.
export { runEvaluation, type EvaluationResult, type RunEvaluationOptions } from './eval/run/index.js';
export { readSummary, type Summary } from './eval/index.js';

// Training.
export { runTrainPipeline, trainingEpisodeSettings, type PipelineEvent, type TrainPipelineOptions, type TrainPipelineResult } from './rl/train-pipeline.js';
export { resolveTrainConfig, trainPreset, validateTrainConfig, type ResolvedTrainConfig, type TrainConfig } from './config/index.js';

// The native engine and trainer.
export { InferenceEngine, type EngineOptions, type EnginePiece, type KvCacheDtype } from './native/engine.js';
export { Trainer, type TrainSequence } from './native/trainer.js';
export { TrainerGroup, type TrainerGroupOptions } from './distributed/trainer-group.js';
export { dealSequences } from './distributed/deal-sequences.js';
export { resolveDevice, type DeviceChoice, type DeviceOptions, type WeightFormat } from './native/device.js';

// Errors.
export { ConfigError, DistributedError, FormatError, NativeError, SwarmError } from './errors.js';
export { packageVersion } from './version.js';
