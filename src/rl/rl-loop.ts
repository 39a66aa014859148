// Algorithm 1, the s³ RL loop. Per update: take M groups in index order, drop those lagging more
// than maxPolicyLag weight versions and those hit by an infrastructure failure (both replaced by new
// groups; update-groups.ts, which also stops a run whose groups keep failing), build the learner's
// loss units, accumulate the loss over micro-batches, take an AdamW
// step, hand the new weights to the engine, write the checkpoint and the metrics line, then commit
// progress in state.json. Three collection schedules (docs/determinism.md):
//   synchronous              each update's groups are collected with the latest weights only.
//   asynchronous, lockstep   (deterministic engine) the next update's M groups are collected while the
//                            trainer updates, with the weights before that update; its new weights are
//                            installed once those groups are all in and nothing runs (one update off
//                            policy, lag 1). Which version samples a piece follows from the events.
//   asynchronous, free       (--nondeterministic) collection runs up to two updates ahead and new weights
//                            are swapped in as they come, under pieces in flight (timing decides).
// Either lockstep schedule makes a run, and a run resumed after a kill, the same bit for bit.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { TrainConfig } from '../config/train-config.js';
import { agentAllowance, type EpisodeSettingsOverrides } from '../harness/episode-settings.js';
import { createRng } from '../common/random.js';
import { writeTraceFile } from '../eval/run/trace-files.js';
import type { TraceEvent } from '../harness/trace-events.js';
import type { InferenceEngine } from '../native/engine.js';
import type { RolloutBackend } from './rollout-backend.js';
import type { NativeTrainDiagnostics, Trainer } from '../native/trainer.js';
import { TrainerGroup } from '../distributed/trainer-group.js';
import { dealSequences } from '../distributed/deal-sequences.js';
import type { Policy } from '../policy/policy.js';
import type { Task, TaskProblem } from '../tasks/index.js';
import { Collector, type RolloutGroup } from './collector.js';
import { learnerBatch } from './learner-batch.js';
import type { LossUnit, RewardSettings } from './loss-unit.js';
import type { RunDirectory } from './run-directory.js';
import { packByTokens } from './sft.js';
import { trainSequences } from './train-sequences.js';
import { takeUpdateGroups } from './update-groups.js';
import { rolloutMetrics, type RolloutMetrics } from './update-metrics.js';

/** RL checkpoints kept besides the newest (older ones are deleted). */
export const KEEP_CHECKPOINTS = 2;

/** One RL update's metrics.jsonl line. */
export interface RlUpdateMetrics extends RolloutMetrics {
  readonly stage: 'rl';
  readonly update: number;
  /** Seconds since the loop started (this process). */
  readonly elapsed: number;
  readonly seconds: number;
  /** Seconds from the update's start until its M groups were in (pending weights installed first); collection overlapping the previous update's training is not counted. */
  readonly collectSeconds: number;
  /** Seconds writing the update's checkpoint and training traces. */
  readonly writeSeconds: number;
  readonly groups: number;
  readonly groupsDroppedForLag: number;
  readonly groupsFailed: number;
  readonly zeroAdvantageGroups: number;
  /** The weights version each group's episodes were dispatched with (the first episode's), in group order. */
  readonly dispatchVersions: readonly number[];
  /** Groups whose G attempts were dispatched with different weights versions (App. C's check; 0 with lockstep). */
  readonly dispatchVersionMismatches: number;
  /** Teams of the team learners whose members did not all get the same reward (App. C's other check; always 0). */
  readonly teamRewardMismatches: number;
  /** Mean and largest lag, in weight versions, between the policy that sampled a group's oldest piece and the trainer. */
  readonly policyLag: { readonly mean: number; readonly max: number };
  readonly loss: number;
  /** Mean k3 KL estimate to the reference policy over generated tokens (0 without the penalty). */
  readonly kl: number;
  readonly meanRatio: number;
  /** Mean |log π_θ − log μ| over the trained tokens: how far the sampler (its weights' precision, its lag) is from the trainer. */
  readonly meanAbsLogRatio: number;
  /**
   * Quantiles of the importance ratio exp(logp_new − logp_old) over the trained tokens, IcePop-masked
   * ones included (see weightedDiagnostics: min/max exact, inner quantiles a token-weighted mean over
   * micro-batches). All 1 for online SFT; all 0 without trained tokens.
   */
  readonly ratioQuantiles: { readonly min: number; readonly p01: number; readonly p10: number; readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
  /** Share of trained tokens the IcePop mask removed. */
  readonly maskFraction: number;
  readonly entropy: number;
  readonly gradNorm: number | null;
  readonly lr: number | null;
  readonly stepSkipped: boolean;
  readonly trainTokens: number;
  /** Of trainTokens, the prompt tokens a shared prefix stood in for (computed once per micro-batch, not per sequence). */
  readonly sharedPrefixTokens: number;
  readonly trainSeconds: number;
  /** Generated tokens per second of wall time over this update. */
  readonly generatedTokensPerSecond: number;
  /** Seconds of this update the deterministic engine had work but waited for the harness to handle a turn (0 when free). */
  readonly engineWaitSeconds: number;
  readonly trainTokensPerSecond: number;
}

/** Options of runRlLoop. */
export interface RlLoopOptions {
  readonly config: TrainConfig;
  readonly run: RunDirectory;
  readonly trainer: Trainer;
  /** Data-parallel training: the trainer's group (rank 0 is `trainer`); absent: the trainer alone. */
  readonly trainerGroup?: TrainerGroup;
  /** Where the rollouts are sampled and how new weights reach them. */
  readonly rollouts: RolloutBackend;
  readonly policy: Policy;
  readonly tokenizerPath: string;
  readonly task: Task;
  readonly problems: readonly TaskProblem[];
  /** Episode settings of training (allowances, context, pieces, temperature, draws, prompt style). */
  readonly settings: EpisodeSettingsOverrides;
  readonly seed: string;
  /** Collect each update's groups only after the previous update's weights are loaded. */
  readonly synchronous: boolean;
  /**
   * Deterministic asynchronous collection, resumed: the engine holds the weights before the last
   * committed update (whose step goes in once the next update's groups are in). false on a fresh run.
   */
  readonly weightsPending: boolean;
  /** The frozen reference policy of the KL penalty (needed when pgCorrection.klCoefficient > 0). */
  readonly reference?: InferenceEngine;
  readonly onUpdate?: (metrics: RlUpdateMetrics) => void;
}

type RatioQuantiles = NativeTrainDiagnostics['ratioQuantiles'];

/**
 * Combines the micro-batches' diagnostics of one update, weighting per-token means by each part's
 * token count. ratioQuantiles is an approximation: the exact quantiles would need every token's
 * ratio, so the combined min is the min of the parts' mins, max the max of their maxes, and each
 * inner quantile (p01 … p99) the token-weighted mean of the parts' quantiles (exact with one
 * micro-batch). Parts without tokens are left out; with no tokens at all every field is 0.
 * Exported for its test.
 */
export function weightedDiagnostics(parts: readonly NativeTrainDiagnostics[]): {
  loss: number;
  kl: number;
  meanRatio: number;
  meanAbsLogRatio: number;
  maskFraction: number;
  entropy: number;
  ratioQuantiles: RatioQuantiles;
  tokens: number;
  sharedPrefixTokens: number;
} {
  const tokens = parts.reduce((sum, d) => sum + d.tokens, 0);
  const weighted = (field: 'meanRatio' | 'meanAbsLogRatio' | 'fractionMasked' | 'meanEntropy' | 'klMean'): number =>
    tokens === 0 ? 0 : parts.reduce((sum, d) => sum + d[field] * d.tokens, 0) / tokens;
  const counted = parts.filter((d) => d.tokens > 0);
  const quantile = (field: 'p01' | 'p10' | 'p50' | 'p90' | 'p99'): number =>
    tokens === 0 ? 0 : counted.reduce((sum, d) => sum + d.ratioQuantiles[field] * d.tokens, 0) / tokens;
  const ratioQuantiles: RatioQuantiles =
    counted.length === 0
      ? { min: 0, p01: 0, p10: 0, p50: 0, p90: 0, p99: 0, max: 0 }
      : {
          min: Math.min(...counted.map((d) => d.ratioQuantiles.min)),
          p01: quantile('p01'),
          p10: quantile('p10'),
          p50: quantile('p50'),
          p90: quantile('p90'),
          p99: quantile('p99'),
          max: Math.max(...counted.map((d) => d.ratioQuantiles.max)),
        };
  return {
    loss: parts.reduce((sum, d) => sum + d.loss, 0),
    kl: weighted('klMean'),
    meanRatio: weighted('meanRatio'),
    meanAbsLogRatio: weighted('meanAbsLogRatio'),
    maskFraction: weighted('fractionMasked'),
    entropy: weighted('meanEntropy'),
    ratioQuantiles,
    tokens,
    sharedPrefixTokens: parts.reduce((sum, d) => sum + d.sharedPrefixTokens, 0),
  };
}

/**
 * The traces kept of an update's episodes (in group and episode order): all of them at share 1, else
 * a sample of ⌈share · episodes⌉ drawn with the seed. Exported for its test.
 */
export function sampledTraces(groups: readonly RolloutGroup[], share: number, seed: string): TraceEvent[] {
  const episodes = groups.flatMap((group) => group.episodes);
  const keep = Math.max(1, Math.ceil(share * episodes.length));
  const chosen = keep >= episodes.length ? null : new Set(createRng(seed).shuffle(episodes.map((_, index) => index)).slice(0, keep));
  return episodes.filter((_, index) => chosen === null || chosen.has(index)).flatMap((episode) => episode.trace);
}

/**
 * Teams whose members got different weights, for the learners that give every member of a team its
 * team's reward (s³, s³ − communication, solo, online SFT); 0 for the individual-reward learner, whose
 * members are rewarded one by one. Exported for its test.
 */
export function teamRewardMismatches(learner: TrainConfig['learner'], units: readonly LossUnit[]): number {
  if (learner === 'individual') return 0;
  return units.filter((unit) => unit.members.some((member) => member.weight !== unit.members[0].weight)).length;
}

/** Runs RL updates from run.state.updates + 1 to config.rlUpdates; returns the checkpoint of the last one. */
export async function runRlLoop(options: RlLoopOptions): Promise<string> {
  const { config, run, trainer, rollouts } = options;
  const group = options.trainerGroup ?? TrainerGroup.single(trainer);
  const firstUpdate = run.state.updates + 1;
  const M = config.problemsPerUpdate;
  const solo = config.learner === 'solo';
  const rewardSettings: RewardSettings = { allowance: agentAllowance(config), tokenCost: config.tokenCost, epsilon: config.advantageEpsilon };
  const microBatchTokens = Math.max(8192, config.contextLength);
  const draws = config.pgCorrection.scoreCenteringDraws;
  const collector = new Collector({
    task: options.task,
    problems: options.problems,
    policy: options.policy,
    teamSize: config.teamSize,
    attempts: config.attemptsPerProblem,
    solo,
    communication: config.learner !== 'no-comm',
    settings: { ...options.settings, draws },
    concurrency: (solo ? config.concurrentSoloEpisodes : null) ?? config.concurrentEpisodes,
    seed: options.seed,
    firstGroup: run.state.nextGroup,
    dispatchVersion: () => version,
  });
  const started = performance.now();
  const lockstepAhead = !options.synchronous && rollouts.deterministic;
  let version = rollouts.version;
  let checkpoint = run.state.checkpoint ?? run.state.initialModel;
  // A checkpoint holding the weights the engine samples with, and one holding the trainer's (null where none was written).
  let engineCheckpoint: string | null = options.weightsPending ? run.state.engineCheckpoint : checkpoint;
  let trainerCheckpoint: string | null = checkpoint;
  let weightsPending = options.weightsPending;
  collector.grant(options.synchronous || lockstepAhead ? M : 2 * M);
  try {
    for (let update = run.state.updates + 1; update <= config.rlUpdates; update += 1) {
      const updateStarted = performance.now();
      const { generatedTokens: generatedBefore, heldSeconds: heldBefore } = rollouts.counters();
      if (weightsPending) {
        // Lockstep ahead: the previous update's weights go in once the groups collected meanwhile are all in.
        await collector.idle();
        const installed = rollouts.install(trainer);
        // The in-process engine takes weights synchronously: no extra turn of the event loop there.
        version = typeof installed === 'number' ? installed : await installed;
        weightsPending = false;
        engineCheckpoint = trainerCheckpoint;
      }
      const { groups, lags, dropped, failed } = await takeUpdateGroups(collector, { groups: M, version, maxPolicyLag: config.maxPolicyLag, update });
      const collectSeconds = (performance.now() - updateStarted) / 1000;
      const nextGroup = collector.nextGroup;
      const last = update === config.rlUpdates;
      if (!options.synchronous && !(lockstepAhead && last)) collector.grant(M);
      const checkpointNow = update % config.checkpointEvery === 0 || last;
      if (lockstepAhead && checkpointNow && !last && engineCheckpoint === null) {
        // Resuming from this update's commit re-collects the next update's groups with the weights the engine
        // holds now (the trainer's before this update): keep them as checkpoint step_{update-1}.
        engineCheckpoint = run.writeCheckpoint(`step_${update - 1}`, (directory) => {
          trainer.save(directory, config);
          fs.copyFileSync(options.tokenizerPath, path.join(directory, 'tokenizer.json'));
        });
      }

      const trainStarted = performance.now();
      const batch = learnerBatch(
        config.learner,
        groups.map((group) => group.episodes),
        rewardSettings,
      );
      const kl = batch.kind === 'pg' ? config.pgCorrection.klCoefficient : 0;
      const sequences = trainSequences(batch.units, { draws, klWeights: kl > 0 });
      // A sequence whose every coefficient is 0 (zero advantage, or a failed team in online SFT) adds nothing to the gradient, unless the KL penalty weighs it.
      const weighted = sequences.filter((sequence) => sequence.coef.some((c) => c !== 0) || (kl > 0 && sequence.klWeight?.some((w) => w !== 0)));
      if (kl > 0) {
        const reference = options.reference;
        if (reference === undefined) throw new Error('runRlLoop: the KL penalty needs the reference policy');
        await Promise.all(weighted.map(async (sequence) => Object.assign(sequence, { refLogprobs: Array.from(await reference.score(sequence.tokens)) })));
      }
      // No optimizer step without a gradient: the learner skips it (online SFT with no successful team), or every
      // sequence weighs zero (all groups tied). AdamW's momentum alone would otherwise keep moving the weights along
      // earlier updates' directions with no new evidence (sign-sized steps at a small model's learning rates).
      const skipStep = batch.skipStep || weighted.length === 0;
      const shares = dealSequences(weighted, group.ranks).map((share) => packByTokens(share, microBatchTokens));
      const parts = await group.accumulateShares(batch.kind, shares, {
        ...(draws > 0 && batch.kind === 'pg' ? { numDraws: draws } : {}),
        ...(kl > 0 ? { klCoef: kl } : {}),
        ...(batch.kind === 'pg' ? { temperature: config.temperature } : {}),
        sum: !skipStep,
      });
      let step: { gradNorm: number; lr: number } | null = null;
      if (skipStep) await group.zeroGrad();
      else {
        // Every rank's parameters are compared with rank 0's on the first update and at each checkpoint.
        step = await group.step({ verifyFingerprints: update === firstUpdate || checkpointNow });
        trainerCheckpoint = null;
        if (lockstepAhead && !last) weightsPending = true;
        else {
          const installed = rollouts.install(trainer);
          version = typeof installed === 'number' ? installed : await installed;
          engineCheckpoint = null;
        }
      }
      const trainSeconds = (performance.now() - trainStarted) / 1000;
      const writeStarted = performance.now();
      if (checkpointNow) {
        checkpoint = run.writeCheckpoint(`step_${update}`, (directory) => {
          trainer.save(directory, config);
          fs.copyFileSync(options.tokenizerPath, path.join(directory, 'tokenizer.json'));
        });
        trainerCheckpoint = checkpoint;
        if (!weightsPending) engineCheckpoint = checkpoint;
      }
      await writeTraceFile(run.resolve(path.join('traces', `update_${update}.jsonl.gz`)), sampledTraces(groups, config.trainingTraceShare, `${options.seed}/traces/${update}`));
      const writeSeconds = (performance.now() - writeStarted) / 1000;
      const diagnostics = weightedDiagnostics(parts);
      const seconds = (performance.now() - updateStarted) / 1000;
      const metrics: RlUpdateMetrics = {
        stage: 'rl',
        update,
        elapsed: (performance.now() - started) / 1000,
        seconds,
        collectSeconds,
        writeSeconds,
        groups: groups.length,
        groupsDroppedForLag: dropped,
        groupsFailed: failed,
        zeroAdvantageGroups: batch.zeroAdvantageGroups,
        dispatchVersions: groups.map((group) => group.dispatchVersions[0]),
        dispatchVersionMismatches: groups.filter((group) => group.dispatchVersions.some((v) => v !== group.dispatchVersions[0])).length,
        teamRewardMismatches: teamRewardMismatches(config.learner, batch.units),
        policyLag: { mean: lags.reduce((a, b) => a + b, 0) / lags.length, max: Math.max(...lags) },
        ...rolloutMetrics(groups, rewardSettings),
        loss: diagnostics.loss,
        kl: diagnostics.kl,
        meanRatio: diagnostics.meanRatio,
        meanAbsLogRatio: diagnostics.meanAbsLogRatio,
        ratioQuantiles: diagnostics.ratioQuantiles,
        maskFraction: diagnostics.maskFraction,
        entropy: diagnostics.entropy,
        gradNorm: step?.gradNorm ?? null,
        lr: step?.lr ?? null,
        stepSkipped: skipStep,
        trainTokens: weighted.reduce((sum, s) => sum + s.tokens.length, 0),
        sharedPrefixTokens: diagnostics.sharedPrefixTokens,
        trainSeconds,
        generatedTokensPerSecond: (rollouts.counters().generatedTokens - generatedBefore) / seconds,
        engineWaitSeconds: rollouts.counters().heldSeconds - heldBefore,
        trainTokensPerSecond: weighted.reduce((sum, s) => sum + s.tokens.length, 0) / trainSeconds,
      };
      run.appendMetrics(metrics as unknown as Record<string, unknown>);
      if (checkpointNow) {
        run.commit({
          updates: update,
          checkpoint,
          nextGroup,
          policyVersion: version + (weightsPending ? 1 : 0),
          engineCheckpoint: weightsPending ? engineCheckpoint : null,
        });
        run.pruneCheckpoints(KEEP_CHECKPOINTS, weightsPending && engineCheckpoint !== null ? [engineCheckpoint] : []);
      }
      options.onUpdate?.(metrics);
      if (options.synchronous) collector.grant(M);
    }
  } finally {
    await collector.close();
  }
  return checkpoint;
}

