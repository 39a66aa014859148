// The evaluation protocol's settings (Appendix M) and where each episode's seed comes from. Evaluation
// seeds are the integers 1..k; every episode draws from the seed path `eval/<seed>/<problem id>/<N>`,
// a namespace no training run uses (training draws from its own paths), so evaluation episodes never
// repeat training episodes, and two evaluations with the same seeds attempt each (problem, N) with
// the same names and sampling streams: a paired design.

import { ConfigError } from '../../errors.js';
import { AGENT_NAME_POOL } from '../../harness/index.js';

/** Team sizes evaluated (Appendix M: N ∈ {1, 2, 4, 6, 8, 12, 16}). */
export const EVAL_SIZES: readonly number[] = [1, 2, 4, 6, 8, 12, 16];
/** Evaluation seeds per policy (Appendix M: six). */
export const EVAL_SEED_COUNT = 6;
/** Held-out problems per task (Appendix M: 32 evaluation problems). */
export const EVAL_PROBLEM_COUNT = 32;
/** Sampling temperature by task (Appendix M: 0.7 for decentralized exploration, 1.0 for information aggregation). */
export const EVAL_TEMPERATURES: Readonly<Record<string, number>> = { aggregation: 1.0, 'aggregation-digits': 1.0, exploration: 0.7, 'exploration-d2': 0.7 };
/** The largest team size the harness names agents for (agent_1 … agent_64). */
export const MAX_EVAL_SIZE = AGENT_NAME_POOL;

/** The evaluation seeds 1..count. */
export function evalSeeds(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index + 1);
}

/** Identifies one episode of an evaluation. */
export interface EpisodeKey {
  /** Evaluation seed. */
  readonly seed: number;
  /** Problem id. */
  readonly problemId: string;
  /** Team size N. */
  readonly n: number;
}

/** The seed path of an episode: `eval/<seed>/<problem id>/<N>`. */
export function episodeSeed(key: EpisodeKey): string {
  return `eval/${key.seed}/${key.problemId}/${key.n}`;
}

/** The evaluation temperature of a task, or throws ConfigError asking for one. */
export function evalTemperature(task: string): number {
  const temperature = EVAL_TEMPERATURES[task];
  if (temperature === undefined) {
    throw new ConfigError(`No evaluation temperature is known for task "${task}"; pass --temperature.`);
  }
  return temperature;
}
