// A bounded pool: runs an async job per item with at most `concurrency` in flight, in item order. The
// first failure stops the pool from starting new jobs; it waits for the jobs in flight and rethrows.

/** Options of runPool. */
export interface RunPoolOptions<T> {
  /** The work items, started in this order. */
  readonly items: readonly T[];
  /** Most jobs in flight at once (≥ 1). */
  readonly concurrency: number;
  /** The job of one item. */
  readonly job: (item: T) => Promise<void>;
}

/** Runs every job with bounded concurrency; rejects with the first failure after the jobs in flight settle. */
export async function runPool<T>(options: RunPoolOptions<T>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (failure === null && next < options.items.length) {
      const item = options.items[next];
      next += 1;
      try {
        await options.job(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency, options.items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
}
