// The Policy interface: what the harness asks of whatever produces an agent's tokens. The native
// inference engine, the scripted demonstrators and the garbage policy all implement it, so the
// harness, the metrics and the tests never care which one runs (ARCHITECTURE.md, "One policy
// interface"). A policy is shared by every agent of every concurrent team; each call generates one
// piece for one agent's sequence.

import type { Tokenizer } from '../model/tokenizer/tokenizer.js';
import type { AgentSequence } from './agent-sequence.js';

/** The most new tokens one generation request may ask for (SPEC §3: pieces of at most 1,024 tokens). */
export const MAX_PIECE_TOKENS = 1024;

/** What one generation request asks for. */
export interface GenerateOptions {
  /** Tokens to generate at most, 1..1,024: min(piece size, allowance left, context left). */
  readonly maxNew: number;
  /** Generation stops right after sampling any of these ids (the stop token is returned and counted). */
  readonly stopTokenIds: readonly number[];
  /** Sampling temperature (1.0 in training, 0.7 when evaluating exploration). */
  readonly temperature: number;
  /** The agent's own sampling seed; with the token index it keys every random draw, so batching never changes a sample. */
  readonly seed: bigint | number;
  /** K extra independent draws per position, with their sampler log-probs (score centering, Appendix A.1); absent or 0 for none. */
  readonly draws?: number;
  /** Aborted when the episode ends (an agent reached the exit): the policy stops and returns finish 'cancelled'. */
  readonly signal?: AbortSignal;
}

/** The K extra draws of every generated position, flattened position-major (K entries per generated token). */
export interface SampledDraws {
  /** Token ids of the draws. */
  readonly tokens: Int32Array | readonly number[];
  /** The sampler log-prob of each draw. */
  readonly logprobs: Float32Array | readonly number[];
}

/** Why a piece stopped: a stop token, maxNew, the policy's own context limit, or the episode's signal. */
export type GenerateFinish = 'stop' | 'length' | 'context' | 'cancelled';

/** One generated piece. */
export interface GenerateResult {
  /** The sampled token ids, the stop token included when finish is 'stop'. */
  readonly tokens: readonly number[];
  /** The sampler's log-prob of each sampled token (same length as tokens). */
  readonly logprobs: readonly number[];
  /** K draws per position when options.draws > 0 and the policy records them. */
  readonly draws?: SampledDraws;
  /** Why generation stopped. */
  readonly finish: GenerateFinish;
  /** The weights version that produced the piece (training updates); absent for policies without versions. */
  readonly policyVersion?: number;
}

/** A source of agent tokens. */
export interface Policy {
  /** The tokenizer whose ids the policy reads and writes; the harness renders context with it. */
  readonly tokenizer: Tokenizer;
  /**
   * Generates the next piece of `sequence`. The sequence is append-only: tokens are never rewritten,
   * so a policy that caches per-sequence state (a KV cache) needs to process only the tokens past the
   * length it saw last. Must not modify the sequence.
   */
  generate(sequence: AgentSequence, options: GenerateOptions): Promise<GenerateResult>;
  /** Frees whatever the policy keeps for `sequence`; the harness calls it once the agent is done. */
  release?(sequence: AgentSequence): void;
}
