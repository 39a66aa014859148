// Agent names (SPEC §1): N names sampled without replacement from agent_1 … agent_64 for every team
// attempt, so names carry no identity across episodes.

import type { Rng } from '../common/random.js';
import { ConfigError } from '../errors.js';

/** Size of the name pool (SPEC §1: agent_1 … agent_64), hence the largest team. */
export const AGENT_NAME_POOL = 64;

/** Draws `count` distinct names from the pool, in draw order. */
export function sampleAgentNames(rng: Rng, count: number): string[] {
  if (!Number.isInteger(count) || count < 1 || count > AGENT_NAME_POOL) {
    throw new ConfigError(`n must be an integer team size in 1..${AGENT_NAME_POOL} (names come from agent_1..agent_${AGENT_NAME_POOL}), got ${String(count)}.`);
  }
  const pool = Array.from({ length: AGENT_NAME_POOL }, (_, index) => `agent_${index + 1}`);
  // Partial Fisher–Yates: the first `count` slots end up a uniform sample without replacement.
  for (let i = 0; i < count; i += 1) {
    const j = i + rng.nextInt(AGENT_NAME_POOL - i);
    const held = pool[i];
    pool[i] = pool[j];
    pool[j] = held;
  }
  return pool.slice(0, count);
}
