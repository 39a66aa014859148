// The shape of a `swarm train` config: every setting of the paper's Table 4 (Appendix I) plus the
// learner of Table 1, the SFT stage of Appendix L and the evaluation protocol of Appendix M.
// Values live in the presets (paper-presets.ts, mini-preset.ts); the field list with ranges and
// references is train-config-fields.ts.

import type { PromptStyle } from '../tasks/task.js';
import type { OptimizerStateDtype } from '../native/trainer.js';
import type { DeviceChoice } from '../native/device.js';

/** The learners of Table 1 (Appendix C). */
export const LEARNERS = ['s3', 'no-comm', 'individual', 'online-sft', 'solo'] as const;
/** A learner of Table 1: s³, s³ − communication, s³: individual reward, s³: online SFT, Solo. */
export type Learner = (typeof LEARNERS)[number];

/** The tasks a run can train on. */
export const TRAIN_TASKS = ['aggregation', 'aggregation-digits', 'exploration'] as const;
/** A built-in task a run can train on (a task module's path is the other kind of `task`). */
export type TrainTask = (typeof TRAIN_TASKS)[number];

/** The KL estimators a PG correction may use: none, or Schulman's k3 = ρ − 1 − log ρ with ρ = π_ref/π_θ. */
export const KL_ESTIMATORS = ['none', 'k3'] as const;
/** A KL estimator. */
export type KlEstimator = (typeof KL_ESTIMATORS)[number];

/** The policy being trained. */
export interface ModelConfig {
  /** What the preset trains (a Qwen3 size, or the built-in s3-mini). */
  name: string;
  /** The Hugging Face folder to start from; null means the built-in s3-mini (or, for a paper preset, still to be given with --model). */
  directory: string | null;
  /**
   * Qwen3's thinking mode: on, the model opens its own `<think>` block; off, every generation prompt
   * ends in the empty block of the chat template's enable_thinking=false (docs/chat-format.md). Every
   * agent's history keeps all its reasoning either way (histories are append-only).
   */
  thinking: boolean;
}

/** AdamW and its schedule. */
export interface OptimizerConfig {
  learningRate: number;
  /** Linear warm-up length in updates (0: constant from the first update). */
  warmupUpdates: number;
  betas: [number, number];
  epsilon: number;
  weightDecay: number;
  /** Global gradient-norm clip. */
  gradClipNorm: number;
  /** Storage of AdamW's moments: f32 (Table 4), or bf16 with stochastic rounding (ours: half their memory). */
  stateDtype: OptimizerStateDtype;
}

/** The off-policy correction of the policy gradient (Appendix A.1). */
export interface PgCorrectionConfig {
  /** IcePop mask lower bound on π_θ/μ (Eq. 6). */
  icePopLow: number;
  /** IcePop mask upper bound on π_θ/μ (Eq. 6). */
  icePopHigh: number;
  /** Weight of the KL penalty against the initial policy (0: none). */
  klCoefficient: number;
  /** How the per-token KL is estimated. */
  klEstimator: KlEstimator;
  /** Score-centering draws K per generated-token context (0: score centering off). */
  scoreCenteringDraws: number;
}

/** Weight formats of the rollout engine: the trainer's f32 weights, rounded to BF16, or blockwise FP8. */
export const ROLLOUT_WEIGHT_FORMATS = ['f32', 'bf16', 'fp8'] as const;
/** A rollout weight format. */
export type RolloutWeightFormat = (typeof ROLLOUT_WEIGHT_FORMATS)[number];
/** KV-cache dtypes of the rollout engine (FP8 E4M3 with computed scales). */
export const ROLLOUT_KV_CACHE_DTYPES = ['f32', 'bf16', 'fp8'] as const;
/** The trainer's matmuls: f32, or bf16 (operands rounded to BF16, f32 sums; App. A.1's BF16 forward and backward). */
export const TRAIN_PRECISIONS = ['f32', 'bf16'] as const;

/** Numerical precision of the sampler and the trainer (Appendix A.1); the importance ratio corrects their mismatch. */
export interface PrecisionConfig {
  /** The rollout engine's weights, converted from the trainer's at every weight swap. */
  rolloutWeights: RolloutWeightFormat;
  /** The rollout engine's KV cache. */
  rolloutKvCache: (typeof ROLLOUT_KV_CACHE_DTYPES)[number];
  /** The trainer's forward, backward, attention and LM-head products (master weights, AdamW, softmax and reductions are f32 always). */
  train: (typeof TRAIN_PRECISIONS)[number];
}

/** Supervised fine-tuning on demonstrations before RL (Appendix L). */
export interface SftConfig {
  /** Scripted demonstration episodes per team size (Appendix L: 512 training episodes). */
  demonstrations: number;
  /** Team sizes the demonstrations are run at. */
  demonstrationTeamSizes: number[];
  /** Updates on excerpts (the histories without their system turn) before `updates` on whole histories (ours; 0: none). */
  excerptUpdates: number;
  /** Learning rate of the excerpt updates (`learningRate` is that of the whole-history updates). */
  excerptLearningRate: number;
  updates: number;
  /** Linear learning-rate warm-up over the first updates (0: none). */
  warmupUpdates: number;
  /** Packed sequences per update. */
  packedSequences: number;
  /** Tokens per packed sequence, at most. */
  maxSequenceTokens: number;
  learningRate: number;
  weightDecay: number;
}

/** The evaluation protocol (Appendix M). */
export interface EvaluationConfig {
  /** Population sizes N evaluated. */
  teamSizes: number[];
  seeds: number;
  /** Held-out problems per seed. */
  problems: number;
  temperature: number;
}

/** A complete, validated `swarm train` config. */
export interface TrainConfig {
  /** A built-in training task, or the absolute path of a task module (docs/tasks.md). */
  task: string;
  model: ModelConfig;
  learner: Learner;
  /** The run directory. */
  out: string;
  /** Seeds the problem order, every episode and the SFT order. */
  seed: number;
  /** Prompt text: the paper's verbatim, or the compact CPU variant. */
  promptStyle: PromptStyle;
  /** Collect each update's rollouts only with the latest weights (reproducible, no overlap with training). */
  synchronousCollection: boolean;
  /**
   * The engine steps in lockstep with the harness (docs/determinism.md): same config, seed and device
   * give the same episodes, metrics and weights whatever the timing. false: the engine runs ahead
   * while JavaScript reacts (`--nondeterministic`).
   */
  deterministicCollection: boolean;
  /**
   * Where the trainer and the rollout engine run: 'auto' (CUDA when this build, a visible GPU and cuBLASLt allow
   * it, else the CPU), 'cpu' or 'cuda' (refused with the reason where CUDA cannot run). Both share the one device.
   */
  device: DeviceChoice;
  /**
   * Data-parallel trainer ranks, one process each (one GPU each on CUDA; on the CPU, processes): each
   * update's micro-batches are dealt across them and their gradients summed before one AdamW step that
   * every rank takes alike (docs/cluster.md). Under torchrun or Slurm the launcher's world size is used.
   */
  trainerGpus: number;
  /** Every data-parallel wait (joining, connecting, each rank's command, each all-reduce) fails after this many seconds, naming the rank. */
  trainerTimeoutSeconds: number;
  rlUpdates: number;
  /** Problems per update, M. */
  problemsPerUpdate: number;
  /** Team attempts per problem, G (the solo learner runs G·N single-agent episodes instead). */
  attemptsPerProblem: number;
  /** Agents per team in training, N. */
  teamSize: number;
  /** Work-phase tokens per agent, L. */
  workAllowance: number;
  /** Tokens per agent for the final answer. */
  finalAllowance: number;
  /** Tokens per generation request. */
  generationPieceTokens: number;
  /** Context window per agent. */
  contextLength: number;
  temperature: number;
  /** Token cost λ of the team reward (Eq. 1). */
  tokenCost: number;
  /** ε of the team-relative advantage (Eq. 2). */
  advantageEpsilon: number;
  /** Team episodes in flight at once. */
  concurrentEpisodes: number;
  /** Solo-learner episodes in flight at once; null where the paper gives none. */
  concurrentSoloEpisodes: number | null;
  /**
   * The rollout engine's KV cache in bytes; null: sized for the device (policy/engine-sizing.ts: the
   * engine's 1 GiB on the CPU, on CUDA half the device memory free once the trainer holds its
   * parameters, gradients and moments). A full cache preempts sequences and recomputes them later
   * (the same tokens, more time).
   */
  rolloutKvCacheBytes: number | null;
  /** Sequences in one rollout-engine step; null: 64 on the CPU, 256 on CUDA. */
  rolloutMaxSequences: number | null;
  /** Updates a rollout may lag behind the trainer before it is discarded. */
  maxPolicyLag: number;
  optimizer: OptimizerConfig;
  pgCorrection: PgCorrectionConfig;
  precision: PrecisionConfig;
  /** Save a checkpoint every this many updates. */
  checkpointEvery: number;
  /**
   * Share of each update's training episodes whose traces are kept (traces/update_N.jsonl.gz) for the
   * Section 6 / App. K analyses: 1 keeps every one; less keeps a seeded sample of that size (at least one).
   */
  trainingTraceShare: number;
  /** The SFT stage before RL; null: RL starts from the base model. */
  sft: SftConfig | null;
  evaluation: EvaluationConfig;
  /** Where this config departs from the paper or fills in what the paper leaves open. */
  deviations: string[];
}
