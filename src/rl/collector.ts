// Rollout collection for Algorithm 1: groups of team attempts (or single-agent episodes for the solo
// learner) on the training problems, run concurrently on the shared policy. Group j attempts problem
// order[j] (training problems in a seeded shuffle, epoch after epoch) with attempt seeds derived from
// (run seed, j), so the groups of a run are the same whenever and in whatever order they are
// collected. The loop grants groups (how far collection may run ahead of training) and takes them
// back in index order; episodes in flight never exceed the concurrency limit. A group whose episode
// failed in the policy (infrastructure, never model output) comes back marked failed, to be replaced.
import { setMaxListeners } from 'node:events';
import { createRng } from '../common/random.js';
import type { EpisodeSettingsOverrides } from '../harness/episode-settings.js';
import { runEpisode, type EpisodeResult } from '../harness/run-episode.js';
import type { Policy } from '../policy/policy.js';
import type { Task, TaskProblem } from '../tasks/index.js';

/** The episodes of one group: the G attempts at one problem whose rewards are compared. */
export interface RolloutGroup {
  /** Group index in the run. */
  readonly index: number;
  readonly problem: TaskProblem;
  readonly episodes: readonly EpisodeResult[];
  /** Oldest and newest weights version that sampled any of its pieces (null: nothing generated). */
  readonly oldestVersion: number | null;
  readonly newestVersion: number | null;
  /**
   * The trainer's weights version when each episode was dispatched, in episode order. App. C: "All G
   * attempts at a problem share a dispatch policy version ... we check both"; the lockstep schedules
   * guarantee it (no weights change while a group runs), the free one may not.
   */
  readonly dispatchVersions: readonly number[];
  /** Set when an episode failed in the policy; the group is then discarded. */
  readonly failure: Error | null;
}

/** Options of Collector. */
export interface CollectorOptions {
  readonly task: Task;
  /** The training problems. */
  readonly problems: readonly TaskProblem[];
  readonly policy: Policy;
  /** N agents per team (solo: episodes per problem are attempts × N single agents). */
  readonly teamSize: number;
  /** G attempts per problem. */
  readonly attempts: number;
  /** Single-agent episodes instead of teams (the solo learner). */
  readonly solo: boolean;
  readonly communication: boolean;
  readonly settings: EpisodeSettingsOverrides;
  /** Episodes in flight at most. */
  readonly concurrency: number;
  /** The run's seed. */
  readonly seed: string;
  /** Index of the first group to collect (resuming a run). */
  readonly firstGroup: number;
  /** The weights version an episode dispatched now is sampled with first (default: always 0). */
  readonly dispatchVersion?: () => number;
}

interface PendingGroup {
  readonly index: number;
  readonly problem: TaskProblem;
  readonly results: (EpisodeResult | undefined)[];
  readonly dispatchVersions: number[];
  failure: Error | null;
  remaining: number;
  nextEpisode: number;
  resolve: (group: RolloutGroup) => void;
  readonly done: Promise<RolloutGroup>;
}

/** Runs groups of episodes ahead of the trainer, as far as granted. */
export class Collector {
  private readonly abort = new AbortController();
  private readonly groups = new Map<number, PendingGroup>();
  private readonly running = new Set<Promise<void>>();
  private nextToStart: number;
  private nextToTake: number;
  private granted = 0;
  private inFlight = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: CollectorOptions) {
    if (options.problems.length === 0) throw new RangeError('Collector: no training problems');
    // Every running episode listens on the one abort signal.
    setMaxListeners(Infinity, this.abort.signal);
    this.nextToStart = options.firstGroup;
    this.nextToTake = options.firstGroup;
  }

  /** Episodes each group runs. */
  get episodesPerGroup(): number {
    return this.options.solo ? this.options.attempts * this.options.teamSize : this.options.attempts;
  }

  /** Index of the next group take() returns. */
  get nextGroup(): number {
    return this.nextToTake;
  }

  /** The problem group `index` attempts. */
  problemOf(index: number): TaskProblem {
    const count = this.options.problems.length;
    const epoch = Math.floor(index / count);
    const order = createRng(`${this.options.seed}/problems/${epoch}`).shuffle(this.options.problems.map((_, i) => i));
    return this.options.problems[order[index % count]];
  }

  /** Allows `count` more groups to start. */
  grant(count: number): void {
    this.granted += count;
    this.pump();
  }

  /** The next group in index order, once all its episodes have ended. */
  take(): Promise<RolloutGroup> {
    const index = this.nextToTake;
    this.nextToTake += 1;
    const group = this.groups.get(index) ?? this.open(index);
    return group.done.then((result) => {
      this.groups.delete(index);
      return result;
    });
  }

  /** Resolves once no episode runs and none granted is left to start (at once when that holds already). */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Aborts every running episode and waits for them to settle; groups not taken are lost. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort(new Error('collection stopped'));
    await Promise.allSettled([...this.running]);
  }

  private open(index: number): PendingGroup {
    let resolve!: (group: RolloutGroup) => void;
    const done = new Promise<RolloutGroup>((r) => (resolve = r));
    const group: PendingGroup = {
      index,
      problem: this.problemOf(index),
      results: new Array<EpisodeResult | undefined>(this.episodesPerGroup).fill(undefined),
      dispatchVersions: new Array<number>(this.episodesPerGroup).fill(0),
      failure: null,
      remaining: this.episodesPerGroup,
      nextEpisode: 0,
      resolve,
      done,
    };
    this.groups.set(index, group);
    return group;
  }

  /** Starts episodes while slots are free: groups in index order, each group's episodes in order. */
  private pump(): void {
    while (!this.closed && this.inFlight < this.options.concurrency) {
      let group = [...this.groups.values()].find((g) => g.nextEpisode < g.results.length && g.index < this.nextToStart);
      if (group === undefined) {
        if (this.granted === 0) return;
        this.granted -= 1;
        const index = this.nextToStart;
        this.nextToStart += 1;
        group = this.groups.get(index) ?? this.open(index);
      }
      this.startEpisode(group, group.nextEpisode);
      group.nextEpisode += 1;
    }
  }

  private startEpisode(group: PendingGroup, episode: number): void {
    const { options } = this;
    this.inFlight += 1;
    group.dispatchVersions[episode] = options.dispatchVersion?.() ?? 0;
    const run = runEpisode({
      ...options.settings,
      task: options.task,
      problem: group.problem,
      n: options.solo ? 1 : options.teamSize,
      policy: options.policy,
      seed: `${options.seed}/group/${group.index}/${episode}`,
      communication: options.solo ? false : options.communication,
      signal: this.abort.signal,
    }).then(
      (result) => {
        group.results[episode] = result;
      },
      (error: unknown) => {
        group.failure ??= error instanceof Error ? error : new Error(String(error));
      },
    );
    const tracked = run.finally(() => {
      this.running.delete(tracked);
      this.inFlight -= 1;
      group.remaining -= 1;
      if (group.remaining === 0) group.resolve(finishGroup(group));
      this.pump();
      if (this.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
    this.running.add(tracked);
  }
}

function finishGroup(group: PendingGroup): RolloutGroup {
  const episodes = group.failure === null ? (group.results as EpisodeResult[]) : [];
  const versions = episodes.flatMap((episode) => episode.agents.flatMap((agent) => agent.sequence.pieces.map((piece) => piece.policyVersion).filter((v): v is number => v !== null)));
  return {
    index: group.index,
    problem: group.problem,
    episodes,
    oldestVersion: versions.length === 0 ? null : Math.min(...versions),
    newestVersion: versions.length === 0 ? null : Math.max(...versions),
    dispatchVersions: [...group.dispatchVersions],
    failure: group.failure,
  };
}
