// The paper's two training setups, line by line from Table 4 (Appendix I), with the SFT stage of
// Appendix L, the correction of Appendix A.1, ε of Appendix C and the evaluation protocol of
// Appendix M. Where the paper names a setting without a number, the value chosen here is listed in
// `deviations`.
import { aggregationTask } from '../tasks/aggregation/task.js';
import { explorationTask } from '../tasks/exploration/task.js';
import type { TrainConfig } from './train-config.js';

/** Information aggregation: Qwen3-0.6B from the base model (Table 4, first column). */
export const PAPER_AGGREGATION: TrainConfig = {
  task: 'aggregation',
  // Table 4: model — Qwen3-0.6B, thinking on.
  // Every agent's history keeps all its reasoning, as Table 4 says for exploration: the work phase is one
  // user query, after which Qwen3's template keeps reasoning anyway; histories are append-only (plan readings).
  model: { name: 'Qwen3-0.6B', directory: null, thinking: true },
  learner: 's3',
  out: 'runs/paper-aggregation',
  seed: 0,
  // Appendix G: the prompts verbatim.
  promptStyle: 'paper',
  // Table 4 / Section 3: inference keeps collecting while the trainer updates.
  synchronousCollection: false,
  // Ours: events, not timing, order the collection (the same run from the same seed; docs/determinism.md).
  deterministicCollection: true,
  // The GPU where there is one (the paper trains on GPUs), else the CPU.
  device: 'auto',
  // One trainer rank unless --trainer-gpus (or a launcher) says more; every wait across ranks at most 10 minutes.
  trainerGpus: 1,
  trainerTimeoutSeconds: 600,
  // Table 4: RL updates — 200.
  rlUpdates: 200,
  // Table 4: teams per update — 256 = 32 problems × 8 attempts.
  problemsPerUpdate: 32,
  attemptsPerProblem: 8,
  // Table 4: team size in training — 4.
  teamSize: 4,
  // Table 4: per-agent allowance — 8,192 work + 1,024 final (the task's defaults, tasks/aggregation/task.ts).
  workAllowance: aggregationTask.defaults.workAllowance,
  finalAllowance: aggregationTask.defaults.finalAllowance,
  // Table 4: generation request size — 1,024 tokens.
  generationPieceTokens: 1024,
  // Table 4: context length — 40,960 (the task's default).
  contextLength: aggregationTask.defaults.contextLimit,
  // Table 4: sampling — temperature 1.0, no top-p/top-k.
  temperature: 1.0,
  // Table 4: token cost λ — 0.25.
  tokenCost: 0.25,
  // Appendix C: ε = 1e-8 in Eq. 2.
  advantageEpsilon: 1e-8,
  // Table 4: concurrent episodes — 256.
  concurrentEpisodes: 256,
  concurrentSoloEpisodes: null,
  // Ours: the rollout engine's KV cache and batch sized for the device (train-config.ts).
  rolloutKvCacheBytes: null,
  rolloutMaxSequences: null,
  // Table 4: maximum policy lag — 4 updates.
  maxPolicyLag: 4,
  // Table 4: AdamW β = (0.9, 0.999), ε = 1e-8; learning rate 5e-7 constant, no warm-up; weight decay 0; clip norm 1.0.
  optimizer: { learningRate: 5e-7, warmupUpdates: 0, betas: [0.9, 0.999], epsilon: 1e-8, weightDecay: 0, gradClipNorm: 1.0, stateDtype: 'f32' },
  // Table 4: probability mask and KL penalty; Eq. 6 (Appendix A.1): mask 1[0.2 ≤ π_θ/μ ≤ 5.0]; no score centering (Appendix A.1).
  // The KL coefficient and estimator are not given in the paper (see deviations).
  pgCorrection: { icePopLow: 0.2, icePopHigh: 5.0, klCoefficient: 0.001, klEstimator: 'k3', scoreCenteringDraws: 0 },
  // Appendix A.1: "Information aggregation inference uses BF16 model weights and activations, with FP32
  // optimization and gradient reduction during training"; "we do not use mixed precision in the inference engine".
  precision: { rolloutWeights: 'bf16', rolloutKvCache: 'bf16', train: 'f32' },
  // Table 4: checkpoints — every update.
  checkpointEvery: 1,
  // App. K.1: aggregation analyses use the logs of every training team.
  trainingTraceShare: 1,
  // Table 4: initial policy — base model.
  sft: null,
  // Appendix M: N ∈ {1, 2, 4, 6, 8, 12, 16}, six seeds, 32 held-out problems, temperature 1.0 for aggregation.
  evaluation: { teamSizes: [1, 2, 4, 6, 8, 12, 16], seeds: 6, problems: 32, temperature: aggregationTask.defaults.evaluationTemperature },
  deviations: [
    'pgCorrection.klCoefficient = 0.001 and klEstimator = k3 (per token, against the initial policy): Table 4 names a KL penalty but gives neither its weight nor its estimator',
  ],
};

/** Decentralized exploration: Qwen3-1.7B after SFT on demonstrations (Table 4, second column). */
export const PAPER_EXPLORATION: TrainConfig = {
  task: 'exploration',
  // Table 4: model — Qwen3-1.7B, thinking on, all reasoning retained.
  model: { name: 'Qwen3-1.7B', directory: null, thinking: true },
  learner: 's3',
  out: 'runs/paper-exploration',
  seed: 0,
  // Appendix G: the prompts verbatim.
  promptStyle: 'paper',
  // Table 4 / Section 3: inference keeps collecting while the trainer updates.
  synchronousCollection: false,
  // Ours: events, not timing, order the collection (the same run from the same seed; docs/determinism.md).
  deterministicCollection: true,
  // The GPU where there is one (the paper trains on GPUs), else the CPU.
  device: 'auto',
  // One trainer rank unless --trainer-gpus (or a launcher) says more; every wait across ranks at most 10 minutes.
  trainerGpus: 1,
  trainerTimeoutSeconds: 600,
  // Table 4: RL updates — 200.
  rlUpdates: 200,
  // Table 4: teams per update — 128 = 16 problems × 8 attempts.
  problemsPerUpdate: 16,
  attemptsPerProblem: 8,
  // Table 4: team size in training — 4.
  teamSize: 4,
  // Table 4: per-agent allowance — 8,192 (+1 unused final token) (the task's defaults, tasks/exploration/task.ts).
  workAllowance: explorationTask.defaults.workAllowance,
  finalAllowance: explorationTask.defaults.finalAllowance,
  // Table 4: generation request size — 1,024 tokens.
  generationPieceTokens: 1024,
  // Table 4: context length — 32,768 (the task's default).
  contextLength: explorationTask.defaults.contextLimit,
  // Table 4: sampling — temperature 1.0, no top-p/top-k.
  temperature: 1.0,
  // Table 4: token cost λ — 0.25.
  tokenCost: 0.25,
  // Appendix C: ε = 1e-8 in Eq. 2.
  advantageEpsilon: 1e-8,
  // Table 4: concurrent episodes — 196 teams / 784 solo episodes.
  concurrentEpisodes: 196,
  concurrentSoloEpisodes: 784,
  // Ours: the rollout engine's KV cache and batch sized for the device (train-config.ts).
  rolloutKvCacheBytes: null,
  rolloutMaxSequences: null,
  // Table 4: maximum policy lag — 4 updates.
  maxPolicyLag: 4,
  // Table 4: AdamW β = (0.9, 0.999), ε = 1e-8 (same); learning rate 2.5e-7 constant; weight decay 0; clip norm 1.0 (same).
  optimizer: { learningRate: 2.5e-7, warmupUpdates: 0, betas: [0.9, 0.999], epsilon: 1e-8, weightDecay: 0, gradClipNorm: 1.0, stateDtype: 'f32' },
  // Table 4: IcePop and MC32 score centering, K = 32 per generated-token context; Eq. 6: mask 1[0.2 ≤ π_θ/μ ≤ 5.0]; no KL term.
  pgCorrection: { icePopLow: 0.2, icePopHigh: 5.0, klCoefficient: 0, klEstimator: 'none', scoreCenteringDraws: 32 },
  // Appendix A.1: "model weights use blockwise FP8 quantization and the KV cache uses FP8 E4M3 with computed
  // scales; activations use BF16. Training uses BF16 forward and backward computation with FP32 optimization
  // parameters" — the trainer's matmuls and attention products take BF16 operands with f32 sums
  // (native/cpu/matmul_nn_bf16.h, native/cpu/attention_train_products.h); its master weights, AdamW states,
  // softmax and reductions are f32 (train-plan.ts: implementationDeviations).
  precision: { rolloutWeights: 'fp8', rolloutKvCache: 'fp8', train: 'bf16' },
  // Table 4: checkpoints — every update.
  checkpointEvery: 1,
  // App. K.1: exploration analyses use "a 20% sample of the event logs".
  trainingTraceShare: 0.2,
  // Table 4: initial policy — 50 SFT updates on demonstrations; Appendix L: 8 packed sequences of up to 32,768 tokens, lr 1e-5, no weight decay.
  // Appendix L: 512 training episodes of four explorers (team variant; the solo learner uses the solo variant); no excerpt updates
  // (ours, for the mini) and no warm-up (none stated).
  sft: { demonstrations: 512, demonstrationTeamSizes: [4], excerptUpdates: 0, excerptLearningRate: 1e-5, updates: 50, warmupUpdates: 0, packedSequences: 8, maxSequenceTokens: 32_768, learningRate: 1e-5, weightDecay: 0 },
  // Appendix M: N ∈ {1, 2, 4, 6, 8, 12, 16}, six seeds, 32 held-out problems, temperature 0.7 for exploration.
  evaluation: { teamSizes: [1, 2, 4, 6, 8, 12, 16], seeds: 6, problems: 32, temperature: explorationTask.defaults.evaluationTemperature },
  deviations: [],
};
