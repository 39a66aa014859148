// `swarm train` end to end, resumable stage by stage: the initial model (the Hugging Face folder
// given, or a freshly initialised built-in s3-mini), SFT on scripted demonstrations (when the config
// has an SFT stage), evaluation of the starting policy, the RL loop, evaluation of the final policy
// and the report. Every stage records its completion in the run directory's state.json; --resume
// skips finished stages, continues RL from its last completed update, and finishes a partly written
// evaluation (evaluation directories resume by themselves).
import fs from 'node:fs';
import path from 'node:path';
import type { TrainConfig } from '../config/train-config.js';
import { ConfigError } from '../errors.js';
import type { EvaluationResult } from '../eval/run/run-evaluation.js';
import { runEvaluation } from '../eval/run/index.js';
import type { EpisodeSettingsOverrides } from '../harness/episode-settings.js';
import { modelShape } from '../model/shapes.js';
import type { WeightFormat } from '../native/device.js';
import { InferenceEngine, type KvCacheDtype } from '../native/engine.js';
import { writeRandomCheckpoint } from '../native/random-checkpoint.js';
import { Trainer } from '../native/trainer.js';
import type { NativeTrainerOptions } from '../native/binding.js';
import { localRankTrainerOptions, openTrainerGroup } from './open-trainer-group.js';
import { Tokenizer } from '../model/tokenizer/index.js';
import { openPolicy } from '../policy/open-policy.js';
import type { Policy } from '../policy/policy.js';
import { RemotePolicy, type RemoteProtocol } from '../policy/remote-policy.js';
import type { WeightTransfer } from '../policy/server-weight-links.js';
import { engineRollouts, ServerRollouts, type RolloutBackend } from './rollout-backend.js';
import { loadTask } from '../tasks/index.js';
import { runRlLoop, type RlUpdateMetrics } from './rl-loop.js';
import { RunDirectory } from './run-directory.js';
import type { SftUpdate } from './sft.js';
import { runSftStage } from './sft-stage.js';

/** Progress the pipeline reports as it goes (the CLI's live view). */
export type PipelineEvent =
  | { readonly kind: 'stage'; readonly stage: string; readonly detail: string }
  | { readonly kind: 'sft'; readonly update: SftUpdate; readonly total: number }
  | { readonly kind: 'rl'; readonly metrics: RlUpdateMetrics; readonly total: number }
  | { readonly kind: 'eval-progress'; readonly which: 'before' | 'after'; readonly done: number; readonly total: number }
  | { readonly kind: 'eval'; readonly which: 'before' | 'after'; readonly result: EvaluationResult };

/** Options of runTrainPipeline. */
export interface TrainPipelineOptions {
  readonly config: TrainConfig;
  /** Continue the run in config.out. */
  readonly resume: boolean;
  /** Skip the before/after evaluations. */
  readonly skipEvaluation?: boolean;
  /** Folder of the split files. */
  readonly dataDir?: string;
  readonly onEvent?: (event: PipelineEvent) => void;
  /**
   * Collect RL rollouts through these inference servers instead of an in-process engine; each
   * update's weights reach every server as weightTransfer says. The before/after evaluations still
   * run in process.
   */
  readonly inferenceServers?: readonly string[];
  /** The API the inference servers speak (default 's3', `swarm serve`; 'vllm', 'sglang'). */
  readonly inferenceProtocol?: RemoteProtocol;
  /** 'folder' (default): written to RUN/serving/v{version} and loaded by every server; 'tcp' | 'nccl': sent over weight links (our servers). */
  readonly weightTransfer?: WeightTransfer;
}

/** What a finished pipeline produced. */
export interface TrainPipelineResult {
  readonly runDirectory: string;
  readonly finalCheckpoint: string;
  readonly before: EvaluationResult | null;
  readonly after: EvaluationResult | null;
}

/** The episode settings training and evaluation share. */
export function trainingEpisodeSettings(config: TrainConfig): EpisodeSettingsOverrides {
  return {
    workAllowance: config.workAllowance,
    finalAllowance: config.finalAllowance,
    contextLimit: config.contextLength,
    generationPieceTokens: config.generationPieceTokens,
    temperature: config.temperature,
    tokenCostWeight: config.tokenCost,
    promptStyle: config.promptStyle,
    thinking: config.model.thinking,
  };
}

/** The KL penalty's reference engine only scores: the config's context, 64 sequences per batch and the engine's default KV cache on any device. */
function referenceEngineLimits(config: TrainConfig): { maxContext: number; maxSequences: number } {
  return { maxContext: config.contextLength, maxSequences: 64 };
}

/** The rollout engine's numerics (App. A.1): its weights converted from the trainer's at every swap, and its KV cache. */
function rolloutPrecision(config: TrainConfig): { weights: WeightFormat; kvCacheDtype: KvCacheDtype } {
  const weights: WeightFormat = config.precision.rolloutWeights === 'f32' ? 'stored' : config.precision.rolloutWeights;
  return { weights, kvCacheDtype: config.precision.rolloutKvCache };
}

/** The RL rollouts' sampler: the in-process engine, or the inference servers of options.inferenceServers. */
async function openRollouts(args: {
  options: TrainPipelineOptions;
  config: TrainConfig;
  engineFrom: string;
  tokenizerPath: string;
  precision: { weights: WeightFormat; kvCacheDtype: KvCacheDtype };
  firstVersion: number;
  servingFolder: string;
}): Promise<{ policy: Policy; rollouts: RolloutBackend; where: string; close: () => void }> {
  const { config, engineFrom, tokenizerPath, precision, firstVersion } = args;
  const servers = args.options.inferenceServers;
  if (servers !== undefined && servers.length > 0) {
    const protocol = args.options.inferenceProtocol ?? 's3';
    const draws = config.pgCorrection.scoreCenteringDraws;
    if (protocol !== 's3' && draws > 0) {
      throw new ConfigError(`pgCorrection.scoreCenteringDraws is ${draws}: the extra draws per position come only from our servers (swarm serve); ${protocol} servers return none. Use swarm serve, or --set pgCorrection.scoreCenteringDraws=0.`);
    }
    const policy = await RemotePolicy.connect({ servers, tokenizer: Tokenizer.fromFile(tokenizerPath), protocol });
    fs.mkdirSync(args.servingFolder, { recursive: true });
    const transfer = args.options.weightTransfer ?? 'folder';
    const rollouts = await ServerRollouts.start({ policy, folder: args.servingFolder, tokenizerPath, config, version: firstVersion, numerics: precision, transfer }, engineFrom);
    const numerics = protocol === 's3' ? '' : `, ${protocol}: sampling numerics are the servers' own`;
    const via = transfer === 'folder' ? '' : `, weights over ${transfer} links`;
    return { policy, rollouts, where: `${servers.length} inference server${servers.length === 1 ? '' : 's'} (${policy.urls.join(', ')}${numerics}${via})`, close: () => rollouts.close() };
  }
  const opened = openPolicy({
    kind: 'model',
    directory: engineFrom,
    tokenizerPath,
    device: { device: config.device, weights: precision.weights },
    kvCacheDtype: precision.kvCacheDtype,
    deterministic: config.deterministicCollection,
    // Sized for the device by openPolicy (policy/engine-sizing.ts) unless the config says.
    engine: {
      maxContext: config.contextLength,
      ...(config.rolloutKvCacheBytes === null ? {} : { kvCacheBytes: config.rolloutKvCacheBytes }),
      ...(config.rolloutMaxSequences === null ? {} : { maxSequences: config.rolloutMaxSequences }),
      policyVersion: firstVersion,
    },
  });
  const engine = opened.engine as InferenceEngine;
  const { runner, kvBlocksTotal, kvBytesPerBlock, blockSize, maxSequences } = engine.stats();
  const cache = `${((kvBlocksTotal * kvBytesPerBlock) / 2 ** 30).toFixed(2)} GiB of KV cache for ${kvBlocksTotal * blockSize} positions, up to ${maxSequences} sequences a step`;
  return { policy: opened.policy, rollouts: engineRollouts(engine), where: `${runner.device} (${runner.gemm}; ${cache})`, close: () => opened.close() };
}

/** Runs (or resumes) the whole pipeline. */
export async function runTrainPipeline(options: TrainPipelineOptions): Promise<TrainPipelineResult> {
  const { config } = options;
  const emit = options.onEvent ?? (() => {});
  const root = path.resolve(config.out);
  const run = options.resume ? RunDirectory.resume(root) : RunDirectory.create(root, config, config.model.directory === null ? '' : path.resolve(config.model.directory));
  const seed = `run/${config.seed}`;
  const settings = trainingEpisodeSettings(config);
  const dataDir = options.dataDir === undefined ? {} : { dataDir: options.dataDir };

  // The initial model.
  if (run.state.initialModel === '') {
    if (config.model.name !== 's3-mini') throw new ConfigError(`${config.model.name} needs --model DIR (a Hugging Face Qwen3 folder).`);
    emit({ kind: 'stage', stage: 'init', detail: 'creating the built-in s3-mini model' });
    const initial = run.writeCheckpoint('initial', (directory) => {
      writeRandomCheckpoint({ shape: modelShape('s3-mini'), seed: BigInt(config.seed), dtype: 'f32', directory });
    });
    run.commit({ initialModel: run.resolve(initial) });
  }
  const initialModel = run.state.initialModel;
  const tokenizerPath = path.join(initialModel, 'tokenizer.json');
  if (!fs.existsSync(tokenizerPath)) throw new ConfigError(`${initialModel} has no tokenizer.json; the agents need the model's tokenizer.`);

  // SFT on scripted demonstrations.
  if (config.sft !== null && !run.state.sftDone) {
    const sft = config.sft;
    const excerpts = sft.excerptUpdates > 0 ? `${sft.excerptUpdates} on excerpts then ` : '';
    emit({ kind: 'stage', stage: 'sft', detail: `${sft.demonstrations} scripted demonstrations per team size, ${excerpts}${sft.updates} SFT updates on whole histories` });
    let checkpoint = '';
    await runSftStage({
      config,
      sft,
      initialModel,
      settings,
      // Only the solo learner fine-tunes on solo demonstrations: "The no-communication and individual-reward
      // exploration controls start from the same fine-tuned team policy" (App. A), so no-comm starts from
      // the team demonstrations as s³ does and loses the messaging tools only in RL and evaluation.
      solo: config.learner === 'solo',
      seed,
      ...dataDir,
      write: (fill) => (checkpoint = run.writeCheckpoint('sft', fill)),
      onUpdate: (update) => {
        run.appendMetrics({ stage: 'sft', ...update });
        emit({ kind: 'sft', update, total: sft.excerptUpdates + sft.updates });
      },
    });
    run.commit({ sftDone: true, checkpoint });
  } else if (!run.state.sftDone) {
    run.commit({ sftDone: true });
  }
  // RL starts from the SFT result, or from the initial model when there is no SFT stage.
  const rlStart = config.sft === null ? initialModel : run.resolve(path.join('checkpoints', 'sft'));
  const startCheckpoint = run.state.updates === 0 ? rlStart : null;

  const task = await loadTask(config.task);
  const evaluate = async (which: 'before' | 'after', model: string): Promise<EvaluationResult> => {
    emit({ kind: 'stage', stage: `eval-${which}`, detail: `N ∈ {${config.evaluation.teamSizes.join(', ')}}, ${config.evaluation.seeds} seeds, ${config.evaluation.problems} held-out problems` });
    const precision = rolloutPrecision(config);
    const policy = openPolicy({ kind: 'model', directory: model, tokenizerPath, deterministic: config.deterministicCollection, device: { device: config.device, weights: precision.weights }, kvCacheDtype: precision.kvCacheDtype });
    try {
      const result = await runEvaluation({
        task,
        policy,
        out: run.resolve(path.join('eval', which)),
        sizes: config.evaluation.teamSizes,
        seeds: config.evaluation.seeds,
        problems: config.evaluation.problems,
        temperature: config.evaluation.temperature,
        communication: config.learner !== 'no-comm' && config.learner !== 'solo',
        settings,
        ...dataDir,
        onEpisode: (done, total) => emit({ kind: 'eval-progress', which, done, total }),
      });
      emit({ kind: 'eval', which, result });
      return result;
    } finally {
      policy.close();
    }
  };
  let before: EvaluationResult | null = null;
  if (!options.skipEvaluation && !run.state.evalBeforeDone && startCheckpoint !== null) {
    before = await evaluate('before', startCheckpoint);
    run.commit({ evalBeforeDone: true });
  }

  // RL.
  let finalCheckpoint = run.state.checkpoint === null ? initialModel : run.resolve(run.state.checkpoint);
  if (run.state.updates < config.rlUpdates) {
    const from = run.state.checkpoint === null ? initialModel : run.resolve(run.state.checkpoint);
    const trainerOptions: NativeTrainerOptions = {
      device: config.device,
      lr: config.optimizer.learningRate,
      beta1: config.optimizer.betas[0],
      beta2: config.optimizer.betas[1],
      eps: config.optimizer.epsilon,
      weightDecay: config.optimizer.weightDecay,
      maxGradNorm: config.optimizer.gradClipNorm,
      optimizerStateDtype: config.optimizer.stateDtype,
      matmulPrecision: config.precision.train,
      // RL starts AdamW afresh on the model it is given (a saved folder may carry another stage's moments); a resumed run restores its own.
      freshOptimizer: run.state.checkpoint === null,
      warmupSteps: config.optimizer.warmupUpdates,
      icepopLow: config.pgCorrection.icePopLow,
      icepopHigh: config.pgCorrection.icePopHigh,
      ...localRankTrainerOptions(config),
    };
    const trainer = Trainer.open(from, trainerOptions);
    const trainerGroup = await openTrainerGroup(config, trainer, from, trainerOptions);
    // Deterministic asynchronous collection resumes with the weights that collected the next update's groups.
    const engineFrom = run.state.engineCheckpoint === null ? from : run.resolve(run.state.engineCheckpoint);
    const precision = rolloutPrecision(config);
    const firstVersion = run.state.policyVersion - (run.state.engineCheckpoint === null ? 0 : 1);
    const sampler = await openRollouts({ options, config, engineFrom, tokenizerPath, precision, firstVersion, servingFolder: run.resolve('serving') });
    emit({
      kind: 'stage',
      stage: 'rl',
      detail: `${config.rlUpdates - run.state.updates} RL updates (learner ${config.learner}); rollouts on ${sampler.where} with ${config.precision.rolloutWeights} weights and a ${precision.kvCacheDtype} KV cache; training on ${trainer.device}${trainerGroup.ranks > 1 ? ` × ${trainerGroup.description}` : ''} with ${config.precision.train} products`,
    });
    // The KL penalty's frozen reference: the policy RL started from.
    const reference = config.pgCorrection.klCoefficient > 0 ? InferenceEngine.load(rlStart, { ...referenceEngineLimits(config), device: config.device, deterministic: config.deterministicCollection }) : undefined;
    try {
      const policy = sampler.policy;
      const problems = await task.loadProblems({ split: 'train', ...dataDir });
      const last = await runRlLoop({
        config,
        run,
        trainer,
        trainerGroup,
        rollouts: sampler.rollouts,
        policy,
        tokenizerPath,
        task,
        problems,
        settings,
        seed,
        synchronous: config.synchronousCollection,
        weightsPending: run.state.engineCheckpoint !== null,
        ...(reference === undefined ? {} : { reference }),
        onUpdate: (metrics) => emit({ kind: 'rl', metrics, total: config.rlUpdates }),
      });
      finalCheckpoint = run.resolve(last);
    } finally {
      sampler.close();
      reference?.close();
      await trainerGroup.close();
    }
  }

  let after: EvaluationResult | null = null;
  if (!options.skipEvaluation && !run.state.evalAfterDone) {
    after = await evaluate('after', finalCheckpoint);
    run.commit({ evalAfterDone: true });
  }
  return { runDirectory: root, finalCheckpoint, before, after };
}
