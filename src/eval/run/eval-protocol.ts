// The evaluation protocol's settings (Appendix M) and where each episode's seed comes from. Evaluation
// seeds are the integers 1..k; every episode draws from the seed path `eval/<seed>/<problem id>/<N>`,
// a namespace no training run uses (training draws from its own paths), so evaluation episodes never
// repeat training episodes, and two evaluations with the same seeds attempt each (problem, N) with
// the same names and sampling streams: a paired design. Each task's evaluation temperature is one of
// its defaults (Task.defaults.evaluationTemperature).

import { AGENT_NAME_POOL } from '../../harness/index.js';

/** Team sizes evaluated (Appendix M: N ∈ {1, 2, 4, 6, 8, 12, 16}). */
export const EVAL_SIZES: readonly number[] = [1, 2, 4, 6, 8, 12, 16];
/** Evaluation seeds per policy (Appendix M: six). */
export const EVAL_SEED_COUNT = 6;
/** Held-out problems per task (Appendix M: 32 evaluation problems). */
export const EVAL_PROBLEM_COUNT = 32;
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
