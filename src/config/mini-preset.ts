// The CPU default: the built-in s3-mini model on aggregation with N = 4, sized to finish on a
// 2-core CPU in about 15 minutes. It starts from the paper's aggregation preset and changes only
// what does not fit a CPU; each change is commented here and named in `deviations`.
import { PAPER_AGGREGATION } from './paper-presets.js';
import type { TrainConfig } from './train-config.js';

/** The `mini` preset: paper-aggregation scaled down for a CPU. */
export const MINI: TrainConfig = {
  ...PAPER_AGGREGATION,
  // The built-in s3-mini model instead of Qwen3-0.6B; its demonstrations reason in <think> blocks as
  // Qwen3 does with thinking on.
  model: { name: 's3-mini', directory: null, thinking: true },
  // Aggregation with private numbers 1..9 instead of 1..99 (ours): s3-mini, trained from scratch in
  // minutes, learns to sort lists of single digits but not lists of two-digit numbers (docs/benchmarks.md).
  task: 'aggregation-digits',
  out: 'runs/mini',
  // Compact prompts (ours): the paper's prompt text is ~1,100 of an agent's ~1,300 tokens.
  promptStyle: 'compact',
  // Rollouts with the latest weights only: the 2 cores serve inference or training, not both, and the run is reproducible.
  synchronousCollection: true,
  // Events, not timing, order the collection: the same seed gives the same run (docs/determinism.md).
  deterministicCollection: true,
  // The CPU on every machine: the mini is built for a laptop's cores, and its results compare across machines.
  device: 'cpu',
  // One trainer process (more only split the same 2 cores).
  trainerGpus: 1,
  trainerTimeoutSeconds: 600,
  // 50 updates instead of 200: 800 team attempts at N = 4, what the 15 minutes hold with room to
  // spare once the shared system turn is computed once (trainer and engine); a weak SFT start has
  // more groups to train on and took 15 min 21 s with 60 (docs/benchmarks.md, "Why 50 RL updates at lr 3e-5").
  rlUpdates: 50,
  // 2 problems per update instead of 32 (G = 8 attempts kept, so 16 teams per update).
  problemsPerUpdate: 2,
  // 256 work + 32 final tokens per agent instead of 8,192 + 1,024.
  workAllowance: 256,
  finalAllowance: 32,
  // Generation requests of 64 tokens instead of 1,024.
  generationPieceTokens: 64,
  // A 2,048-token context instead of 40,960.
  contextLength: 2048,
  // 16 episodes in flight instead of 256.
  concurrentEpisodes: 16,
  // Learning rate 3e-5 instead of 5e-7: a small model trained for 50 updates needs larger steps, and
  // AdamW moves every weight by about the learning rate per step whatever the gradient's size, so a
  // 16-team update's noise at 1e-4 undid what the team advantage taught (docs/benchmarks.md, "Why 50 RL updates at lr 3e-5").
  optimizer: { ...PAPER_AGGREGATION.optimizer, learningRate: 3e-5 },
  // No token cost (λ 0 instead of 0.25): most of the mini's groups are solved by all eight teams, and
  // there the group-normalized advantage (R − mean) / std turns length differences of a few tokens
  // into full-size advantages, so RL trained brevity at the expense of success (docs/benchmarks.md).
  tokenCost: 0,
  // No KL penalty (the paper's has no stated weight) and no mask change.
  pgCorrection: { ...PAPER_AGGREGATION.pgCorrection, klCoefficient: 0, klEstimator: 'none' },
  // f32 throughout: the mini is small, and its runs compare across machines (docs/determinism.md).
  precision: { rolloutWeights: 'f32', rolloutKvCache: 'f32', train: 'f32' },
  // A checkpoint every update, as in the paper (the model is small).
  checkpointEvery: 1,
  // Every training episode's trace (16 per update, a few MB in all).
  trainingTraceShare: 1,
  // SFT warm start (ours: the paper starts from a pretrained model that already knows language and
  // tools): 400 scripted episodes at each of N = 2, 3, 4; first updates on excerpts (the histories
  // without their system turn, twice the agent turns per token), then on whole histories.
  sft: {
    demonstrations: 400,
    demonstrationTeamSizes: [2, 3, 4],
    excerptUpdates: 200,
    excerptLearningRate: 2e-3,
    updates: 60,
    warmupUpdates: 10,
    packedSequences: 2,
    maxSequenceTokens: 4096,
    learningRate: 1e-3,
    weightDecay: 0,
  },
  // Evaluation at N ∈ {2, 4, 8}, 3 seeds instead of 7 sizes and 6 seeds (32 problems, as in the paper).
  evaluation: { ...PAPER_AGGREGATION.evaluation, teamSizes: [2, 4, 8], seeds: 3 },
  deviations: [
    'model: built-in s3-mini (4 layers, hidden 256, its own 1,671-token BPE) instead of Qwen3-0.6B',
    'promptStyle: compact prompts (ours) instead of the verbatim Appendix G prompts',
    'synchronousCollection: rollouts wait for the latest weights instead of overlapping training',
    'device: the CPU on every machine instead of GPUs',
    'task: aggregation-digits, private numbers 1..9 instead of 1..99 (same prompts, protocol and grading)',
    'sft: warm start on scripted demonstrations at N ∈ {2, 3, 4}, 200 updates on excerpts (lr 2e-3) then 60 on whole histories (lr 1e-3) (training problems hold 4 numbers; the paper starts aggregation from the base model)',
    'rlUpdates: 50 instead of 200',
    'problemsPerUpdate: 2 instead of 32 (16 teams per update instead of 256)',
    'workAllowance / finalAllowance: 256 / 32 instead of 8,192 / 1,024',
    'generationPieceTokens: 64 instead of 1,024',
    'contextLength: 2,048 instead of 40,960',
    'concurrentEpisodes: 16 instead of 256',
    'optimizer.learningRate: 3e-5 instead of 5e-7',
    'tokenCost: λ = 0 instead of 0.25 (no length term in the reward)',
    'pgCorrection: no KL penalty',
    'precision: f32 rollout weights and KV cache instead of BF16 (the trainer is f32, as the paper\'s optimizer)',
    'evaluation: N ∈ {2, 4, 8}, 3 seeds instead of N ∈ {1, 2, 4, 6, 8, 12, 16}, 6 seeds',
  ],
};
