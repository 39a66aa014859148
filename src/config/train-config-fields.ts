// Every leaf of a TrainConfig in one list: its dotted path, its type and allowed range (used to
// validate presets, config files and `--set` values) and where the paper sets it (shown by
// `swarm train --dry-run`). Groups that may be null as a whole are listed in NULLABLE_GROUPS.
import { PROMPT_STYLES } from '../tasks/task.js';
import { KL_ESTIMATORS, LEARNERS, ROLLOUT_KV_CACHE_DTYPES, ROLLOUT_WEIGHT_FORMATS, TRAIN_PRECISIONS, TRAIN_TASKS } from './train-config.js';
import { OPTIMIZER_STATE_DTYPES } from '../native/trainer.js';
import { DEVICE_CHOICES } from '../native/device.js';

/** The type and range of one config leaf. */
export type FieldType =
  | { readonly kind: 'integer'; readonly min: number; readonly max?: number }
  | { readonly kind: 'number'; readonly min: number; readonly max?: number; readonly exclusiveMin?: boolean }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'string' }
  | { readonly kind: 'enum'; readonly values: readonly string[] }
  /** A built-in task of `values`, or a task module's path (tasks/load-task.ts). */
  | { readonly kind: 'task'; readonly values: readonly string[] }
  | { readonly kind: 'number-pair'; readonly min: number; readonly max: number }
  | { readonly kind: 'integer-list'; readonly min: number }
  | { readonly kind: 'string-list' };

/** One leaf of the config. */
export interface ConfigField {
  /** Dotted path, e.g. `optimizer.learningRate`. */
  readonly path: string;
  readonly type: FieldType;
  /** Whether null is allowed. */
  readonly nullable?: boolean;
  /** Where the paper sets it. */
  readonly reference: string;
}

/** Groups that may be null as a whole (then none of their leaves are present). */
export const NULLABLE_GROUPS: readonly string[] = ['sft'];

const positive = (min = 1): FieldType => ({ kind: 'integer', min });

/** Every leaf of a TrainConfig, in the order the plan prints them. */
export const TRAIN_CONFIG_FIELDS: readonly ConfigField[] = [
  { path: 'task', type: { kind: 'task', values: TRAIN_TASKS }, reference: 'Table 4 columns, or a task module (docs/tasks.md)' },
  { path: 'model.name', type: { kind: 'string' }, reference: 'Table 4: model' },
  { path: 'model.directory', type: { kind: 'string' }, nullable: true, reference: '--model' },
  { path: 'model.thinking', type: { kind: 'boolean' }, reference: 'Table 4: model (thinking on)' },
  { path: 'learner', type: { kind: 'enum', values: LEARNERS }, reference: 'Table 1, Appendix C' },
  { path: 'out', type: { kind: 'string' }, reference: '--out' },
  { path: 'seed', type: positive(0), reference: 'ours: the run seed' },
  { path: 'promptStyle', type: { kind: 'enum', values: PROMPT_STYLES }, reference: 'Appendix G (paper) or ours (compact)' },
  { path: 'synchronousCollection', type: { kind: 'boolean' }, reference: 'Table 4 (asynchronous) or ours (synchronous)' },
  { path: 'deterministicCollection', type: { kind: 'boolean' }, reference: 'ours: the engine in lockstep with the harness (docs/determinism.md)' },
  { path: 'device', type: { kind: 'enum', values: DEVICE_CHOICES }, reference: 'Table 4: hardware (the paper trains on GPUs); --device' },
  { path: 'trainerGpus', type: positive(), reference: 'ours: data-parallel trainer ranks (the paper\'s trainer GPUs are not stated); --trainer-gpus' },
  { path: 'trainerTimeoutSeconds', type: { kind: 'number', min: 0, exclusiveMin: true }, reference: 'ours: the deadline of every data-parallel wait' },
  { path: 'rlUpdates', type: positive(), reference: 'Table 4: RL updates' },
  { path: 'problemsPerUpdate', type: positive(), reference: 'Table 4: teams per update (problems M)' },
  { path: 'attemptsPerProblem', type: positive(), reference: 'Table 4: teams per update (attempts G)' },
  { path: 'teamSize', type: positive(), reference: 'Table 4: team size in training' },
  { path: 'workAllowance', type: positive(), reference: 'Table 4: per-agent allowance (work)' },
  { path: 'finalAllowance', type: positive(), reference: 'Table 4: per-agent allowance (final)' },
  { path: 'generationPieceTokens', type: positive(), reference: 'Table 4: generation request size' },
  { path: 'contextLength', type: positive(), reference: 'Table 4: context length' },
  { path: 'temperature', type: { kind: 'number', min: 0 }, reference: 'Table 4: sampling' },
  { path: 'tokenCost', type: { kind: 'number', min: 0, max: 1 }, reference: 'Table 4: token cost λ' },
  { path: 'advantageEpsilon', type: { kind: 'number', min: 0, exclusiveMin: true }, reference: 'Appendix C: ε of Eq. 2' },
  { path: 'concurrentEpisodes', type: positive(), reference: 'Table 4: concurrent episodes (teams)' },
  { path: 'concurrentSoloEpisodes', type: positive(), nullable: true, reference: 'Table 4: concurrent episodes (solo)' },
  { path: 'rolloutKvCacheBytes', type: positive(), nullable: true, reference: 'ours: the rollout engine\'s KV cache (null: 1 GiB on the CPU, half the free device memory on CUDA)' },
  { path: 'rolloutMaxSequences', type: positive(), nullable: true, reference: 'ours: sequences per rollout-engine step (null: 64 on the CPU, 256 on CUDA)' },
  { path: 'maxPolicyLag', type: positive(0), reference: 'Table 4: maximum policy lag' },
  { path: 'optimizer.learningRate', type: { kind: 'number', min: 0, exclusiveMin: true }, reference: 'Table 4: learning rate' },
  { path: 'optimizer.warmupUpdates', type: positive(0), reference: 'Table 4: learning rate (warm-up)' },
  { path: 'optimizer.betas', type: { kind: 'number-pair', min: 0, max: 0.999999 }, reference: 'Table 4: optimizer β' },
  { path: 'optimizer.epsilon', type: { kind: 'number', min: 0, exclusiveMin: true }, reference: 'Table 4: optimizer ε' },
  { path: 'optimizer.weightDecay', type: { kind: 'number', min: 0 }, reference: 'Table 4: weight decay' },
  { path: 'optimizer.gradClipNorm', type: { kind: 'number', min: 0, exclusiveMin: true }, reference: 'Table 4: gradient clipping' },
  { path: 'optimizer.stateDtype', type: { kind: 'enum', values: OPTIMIZER_STATE_DTYPES }, reference: 'Table 4: precision (FP32 AdamW states); bf16 is ours' },
  { path: 'pgCorrection.icePopLow', type: { kind: 'number', min: 0 }, reference: 'Appendix A.1, Eq. 6: mask lower bound' },
  { path: 'pgCorrection.icePopHigh', type: { kind: 'number', min: 0, exclusiveMin: true }, reference: 'Appendix A.1, Eq. 6: mask upper bound' },
  { path: 'pgCorrection.klCoefficient', type: { kind: 'number', min: 0 }, reference: 'Table 4: PG correction (KL penalty)' },
  { path: 'pgCorrection.klEstimator', type: { kind: 'enum', values: KL_ESTIMATORS }, reference: 'Table 4: PG correction (KL penalty)' },
  { path: 'pgCorrection.scoreCenteringDraws', type: positive(0), reference: 'Table 4: score-centering samples K' },
  { path: 'precision.rolloutWeights', type: { kind: 'enum', values: ROLLOUT_WEIGHT_FORMATS }, reference: 'Table 4 / App. A.1: inference weights (BF16 in aggregation, blockwise FP8 in exploration)' },
  { path: 'precision.rolloutKvCache', type: { kind: 'enum', values: ROLLOUT_KV_CACHE_DTYPES }, reference: 'App. A.1: KV cache (FP8 E4M3 with computed scales in exploration)' },
  { path: 'precision.train', type: { kind: 'enum', values: TRAIN_PRECISIONS }, reference: 'Table 4 / App. A.1: training (FP32 optimizer and reduction; BF16 forward/backward in exploration)' },
  { path: 'checkpointEvery', type: positive(), reference: 'Table 4: checkpoints' },
  { path: 'trainingTraceShare', type: { kind: 'number', min: 0, max: 1, exclusiveMin: true }, reference: 'App. K.1: training trajectories (every team in aggregation, a 20% sample in exploration)' },
  { path: 'sft.demonstrations', type: positive(), reference: 'Appendix L: demonstration episodes' },
  { path: 'sft.demonstrationTeamSizes', type: { kind: 'integer-list', min: 1 }, reference: 'Appendix L: team and solo demonstrations' },
  { path: 'sft.excerptUpdates', type: positive(0), reference: 'ours: SFT on excerpts first (mini)' },
  { path: 'sft.excerptLearningRate', type: { kind: 'number', min: 0, exclusiveMin: true }, reference: 'ours: SFT on excerpts first (mini)' },
  { path: 'sft.updates', type: positive(), reference: 'Table 4: initial policy; Appendix L' },
  { path: 'sft.warmupUpdates', type: positive(0), reference: 'Appendix L: SFT' },
  { path: 'sft.packedSequences', type: positive(), reference: 'Appendix L: SFT' },
  { path: 'sft.maxSequenceTokens', type: positive(), reference: 'Appendix L: SFT' },
  { path: 'sft.learningRate', type: { kind: 'number', min: 0, exclusiveMin: true }, reference: 'Appendix L: SFT' },
  { path: 'sft.weightDecay', type: { kind: 'number', min: 0 }, reference: 'Appendix L: SFT' },
  { path: 'evaluation.teamSizes', type: { kind: 'integer-list', min: 1 }, reference: 'Appendix M' },
  { path: 'evaluation.seeds', type: positive(), reference: 'Appendix M' },
  { path: 'evaluation.problems', type: positive(), reference: 'Appendix M' },
  { path: 'evaluation.temperature', type: { kind: 'number', min: 0 }, reference: 'Appendix M' },
  { path: 'deviations', type: { kind: 'string-list' }, reference: 'departures from the paper' },
];

/** The field at `path`, or undefined. */
export function configField(path: string): ConfigField | undefined {
  return TRAIN_CONFIG_FIELDS.find((field) => field.path === path);
}

/** Whether `path` names a group (a prefix of some leaf). */
export function isConfigGroup(path: string): boolean {
  return TRAIN_CONFIG_FIELDS.some((field) => field.path.startsWith(`${path}.`));
}
