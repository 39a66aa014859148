// The M groups one RL update trains on, taken from the collector in index order: a group sampled by
// weights more than maxPolicyLag versions behind the trainer's is dropped, one an infrastructure
// failure hit is recollected (with a warning), each replaced by a newly granted group. Failures that
// do not pass stop the run: when 2M groups in a row fail (two updates' worth, more than the groups a
// passing outage of the collector's concurrency can fail), the update throws with the last failure's
// message; completed updates stay committed, so the run continues with --resume once the cause is
// fixed. Between failures the loop yields to the event loop, so a failure that comes back at once
// cannot hold it in promise callbacks (warnings print, signals land).
import type { Collector, RolloutGroup } from './collector.js';

/** What takeUpdateGroups took, and what it dropped or recollected on the way. */
export interface UpdateGroups {
  readonly groups: RolloutGroup[];
  /** Per group taken: the trainer's version minus the oldest version that sampled it. */
  readonly lags: number[];
  readonly dropped: number;
  readonly failed: number;
}

/** Options of takeUpdateGroups. */
export interface UpdateGroupsOptions {
  /** Groups the update trains on. */
  readonly groups: number;
  /** The trainer's weights version. */
  readonly version: number;
  readonly maxPolicyLag: number;
  /** The update's number, for the error message. */
  readonly update: number;
}

/** Takes `options.groups` usable groups from `collector` (see the file header). */
export async function takeUpdateGroups(collector: Pick<Collector, 'take' | 'grant'>, options: UpdateGroupsOptions): Promise<UpdateGroups> {
  const M = options.groups;
  const groups: RolloutGroup[] = [];
  const lags: number[] = [];
  let dropped = 0;
  let failed = 0;
  let failedInARow = 0;
  while (groups.length < M) {
    const group = await collector.take();
    if (group.failure !== null) {
      failed += 1;
      failedInARow += 1;
      if (failedInARow >= 2 * M) {
        throw new Error(
          `${failedInARow} rollout groups in a row failed (update ${options.update}); the last: ${group.failure.message}. ` +
            'Completed updates are kept: fix the cause and continue with --resume.',
        );
      }
      process.emitWarning(`rollout group ${group.index} failed and is recollected: ${group.failure.message}`);
      collector.grant(1);
      await new Promise((resolve) => setImmediate(resolve));
      continue;
    }
    failedInARow = 0;
    const lag = options.version - (group.oldestVersion ?? options.version);
    if (lag > options.maxPolicyLag) {
      dropped += 1;
      collector.grant(1);
      continue;
    }
    lags.push(lag);
    groups.push(group);
  }
  return { groups, lags, dropped, failed };
}
