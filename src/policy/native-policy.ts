// NativePolicy: the harness's Policy on the native inference engine. Each AgentSequence gets an
// engine sequence (kept in a WeakMap, so a forgotten agent leaves nothing behind in JS); every
// call appends only the tokens the agent's history gained since the last call (context the
// harness rendered), so the engine's KV cache carries the history from piece to piece.
import type { InferenceEngine, EngineSequence } from '../native/engine.js';
import type { Tokenizer } from '../model/tokenizer/tokenizer.js';
import type { AgentSequence } from './agent-sequence.js';
import type { GenerateOptions, GenerateResult, Policy } from './policy.js';
import { PolicyError } from './policy-error.js';

interface EngineState {
  readonly id: EngineSequence;
  /** Tokens of the agent's history the engine sequence already holds. */
  seen: number;
}

/** Options of a NativePolicy. */
export interface NativePolicyOptions {
  readonly engine: InferenceEngine;
  readonly tokenizer: Tokenizer;
}

/** A Policy served by one shared InferenceEngine. */
export class NativePolicy implements Policy {
  readonly tokenizer: Tokenizer;
  private readonly engine: InferenceEngine;
  private readonly maxContext: number;
  private readonly states = new WeakMap<AgentSequence, EngineState>();

  constructor(options: NativePolicyOptions) {
    this.engine = options.engine;
    this.tokenizer = options.tokenizer;
    this.maxContext = options.engine.stats().maxContext;
  }

  async generate(sequence: AgentSequence, options: GenerateOptions): Promise<GenerateResult> {
    let state = this.states.get(sequence);
    if (state === undefined) {
      state = { id: this.engine.openSequence(), seen: 0 };
      this.states.set(sequence, state);
    }
    if (sequence.length < state.seen) {
      throw new PolicyError(`NativePolicy: the history of ${sequence.agentName} shrank from ${state.seen} to ${sequence.length} tokens`);
    }
    if (sequence.length >= this.maxContext) return { tokens: [], logprobs: [], finish: 'context' };
    if (sequence.length > state.seen) {
      this.engine.append(state.id, sequence.tokens(state.seen));
      state.seen = sequence.length;
    }
    const piece = await this.engine.generate(state.id, options);
    // The engine's sequence now ends with the sampled tokens; the harness appends the same ones.
    state.seen += piece.tokens.length;
    return piece;
  }

  release(sequence: AgentSequence): void {
    const state = this.states.get(sequence);
    if (state === undefined) return;
    this.states.delete(sequence);
    this.engine.release(state.id);
  }
}
