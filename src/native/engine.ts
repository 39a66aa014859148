// Typed access to the native inference engine (native/engine): one shared server per model that
// every agent's sequence lives in. Sequences are opened, fed context with append() and asked for
// pieces with generate(); a scheduler thread batches all pending requests continuously and
// answers through promises, so JS never blocks on a forward pass. An AbortSignal cancels a piece
// (it resolves 'cancelled' with the tokens so far).
import { loadAddon } from './addon.js';
import { NativeError } from '../errors.js';
import type { NativeEngine, NativeEngineOptions, NativeEngineResult, NativeEngineStats } from './binding.js';
import { LockstepGate } from './lockstep-gate.js';
import type { Collective } from './collective.js';
import type { Trainer } from './trainer.js';

/** Element types the KV cache can hold ('fp8': OCP e4m3, one f32 scale per position and KV head). */
export type KvCacheDtype = 'f32' | 'bf16' | 'fp8';

/** Every KV cache element type, in the order the CLI lists them. */
export const KV_CACHE_DTYPES: readonly KvCacheDtype[] = ['f32', 'bf16', 'fp8'];

/** Bytes one cached key or value element takes (fp8 rows carry a scale on top: KV_CACHE_ROW_SCALE_BYTES). */
export const KV_CACHE_DTYPE_BYTES: Readonly<Record<KvCacheDtype, number>> = { f32: 4, bf16: 2, fp8: 1 };

/** Bytes of the scale each row of headDim cached elements (one position of one KV head) carries. */
export const KV_CACHE_ROW_SCALE_BYTES: Readonly<Record<KvCacheDtype, number>> = { f32: 0, bf16: 0, fp8: 4 };

/** Bytes the keys and values of one position take over every layer (as the engine sizes its blocks: stats().kvBytesPerBlock / blockSize). */
export function kvCacheBytesPerPosition(shape: { layers: number; kvHeads: number; headDim: number }, dtype: KvCacheDtype): number {
  return 2 * shape.layers * shape.kvHeads * (shape.headDim * KV_CACHE_DTYPE_BYTES[dtype] + KV_CACHE_ROW_SCALE_BYTES[dtype]);
}

/**
 * Cache and batching limits, numerics and the device; every field is optional. The native fields are
 * NativeEngineOptions (binding.ts, documented there); `deterministic` is the wrapper's own: the
 * engine steps in lockstep with JavaScript (default true; src/native/lockstep-gate.ts).
 */
export type EngineOptions = Readonly<Omit<NativeEngineOptions, 'lockstep' | 'onTurn'>> & {
  /**
   * Deterministic collection (default true): the engine steps in lockstep with JavaScript (after a
   * step that finishes pieces it waits until the reactions to them have queued their follow-ups), so
   * which step a request joins, and so every result, depends on the order of events alone and not on
   * timing. false lets the engine run ahead while JavaScript reacts (runs then differ with timing).
   */
  readonly deterministic?: boolean;
};

/** One generation request. */
export interface EngineGenerateOptions {
  /** 1..1,024 new tokens at most. */
  readonly maxNew: number;
  /** Generation stops right after sampling one of these (the stop token is returned). */
  readonly stopTokenIds: readonly number[];
  /** Sampling temperature; 0 is greedy. */
  readonly temperature: number;
  /** Keys every draw together with the token's index in the sequence and the draw index. */
  readonly seed: bigint | number;
  /** K extra independent draws per position (0..64). */
  readonly draws?: number;
  /** Cancels the request. */
  readonly signal?: AbortSignal;
}

/** A generated piece. */
export interface EnginePiece {
  readonly tokens: number[];
  readonly logprobs: number[];
  /** K draws per generated token, position-major, when draws > 0. */
  readonly draws?: { readonly tokens: Int32Array; readonly logprobs: Float32Array };
  readonly finish: 'stop' | 'length' | 'context' | 'cancelled';
  /** The weights version that sampled the piece's first token (0 for the weights loaded first). */
  readonly policyVersion: number;
}

/** An open sequence's handle. */
export type EngineSequence = number;

/** The shared inference server of one model. */
export class InferenceEngine {
  private constructor(
    /** The checkpoint folder the engine started with. */
    readonly directory: string,
    private readonly native: NativeEngine,
    /** Null when the engine is not deterministic (no lockstep). */
    private readonly gate: LockstepGate | null,
  ) {
    gate?.attach(native);
  }

  /** Loads the checkpoint in `directory` and starts the scheduler thread. */
  static load(directory: string, options: EngineOptions = {}): InferenceEngine {
    const { binding } = loadAddon();
    const { deterministic = true, ...rest } = options;
    const gate = deterministic ? new LockstepGate() : null;
    const nativeOptions: NativeEngineOptions = { ...rest, lockstep: deterministic, ...(gate === null ? {} : { onTurn: gate.onTurn }) };
    try {
      return new InferenceEngine(directory, new binding.Engine(directory, nativeOptions), gate);
    } catch (error) {
      throw new NativeError(`cannot start the inference engine on ${directory}: ${(error as Error).message}`);
    }
  }

  /** Whether the engine steps in lockstep with JavaScript (EngineOptions.deterministic). */
  get deterministic(): boolean {
    return this.gate !== null;
  }

  /**
   * Keeps a deterministic engine from starting another step until the returned function is called:
   * taken in a reaction to a result, it pins whatever is done before the release (a weight swap,
   * say) to that point of the event order. A no-op release on an engine that is not deterministic.
   */
  hold(): () => void {
    return this.gate?.hold() ?? (() => undefined);
  }

  /** A new, empty sequence. */
  openSequence(): EngineSequence {
    return this.native.openSequence();
  }

  /** Appends context tokens (processed by the next generate). RangeError past the context or outside the vocabulary. */
  append(sequence: EngineSequence, tokens: Int32Array | readonly number[]): void {
    this.native.append(sequence, tokens instanceof Int32Array ? tokens : Int32Array.from(tokens));
  }

  /** Generates one piece after everything appended so far. */
  async generate(sequence: EngineSequence, options: EngineGenerateOptions): Promise<EnginePiece> {
    const { id, promise } = this.native.generate(sequence, {
      maxNew: options.maxNew,
      stopTokenIds: Int32Array.from(options.stopTokenIds),
      temperature: options.temperature,
      seed: options.seed,
      draws: options.draws ?? 0,
    });
    this.gate?.schedule();
    const signal = options.signal;
    const onAbort = (): void => {
      this.native.cancel(id);
      this.gate?.schedule();
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return toPiece(await promise, options.draws ?? 0);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Forgets a sequence and frees its cache (a running piece on it resolves 'cancelled'). */
  release(sequence: EngineSequence): void {
    this.native.release(sequence);
    this.gate?.schedule();
  }

  /** Log-probs of tokens[1..], each given the tokens before it, under the current weights. */
  async score(tokens: Int32Array | readonly number[]): Promise<Float32Array> {
    const pending = this.native.score(tokens instanceof Int32Array ? tokens : Int32Array.from(tokens));
    this.gate?.schedule();
    return (await pending).logprobs;
  }

  /** Swaps in the checkpoint in `directory` between batches; returns the version later pieces report. */
  loadWeights(directory: string): number {
    try {
      return this.native.loadWeights(directory);
    } catch (error) {
      throw new NativeError(`cannot load new weights from ${directory}: ${(error as Error).message}`);
    } finally {
      this.gate?.schedule();
    }
  }

  /**
   * Swaps in the trainer's current weights (f32 copies made natively, no file and no JS copy) between
   * batches; returns the version later pieces report. Refused while the trainer accumulates, or when
   * its model has another shape than the engine's.
   */
  loadWeightsFrom(trainer: Trainer): number {
    try {
      return this.native.loadWeightsFromTrainer(trainer.nativeHandle);
    } catch (error) {
      throw new NativeError(`cannot load new weights from the trainer on ${trainer.directory}: ${(error as Error).message}`);
    } finally {
      this.gate?.schedule();
    }
  }

  /**
   * Receives the parameters a trainer sends over `link` (rank 1 of a connected two-rank weight link,
   * src/native/weight-link.ts) and swaps them in between batches; resolves with the version later
   * pieces report. The engine keeps serving while they arrive.
   */
  async receiveWeights(link: Collective): Promise<{ weightsVersion: number; bytes: number; seconds: number }> {
    try {
      return await this.native.receiveWeights(link.nativeHandle);
    } catch (error) {
      throw new NativeError(`cannot receive new weights over ${link.description}: ${(error as Error).message}`);
    } finally {
      this.gate?.schedule();
    }
  }

  /** Slots, KV blocks, queue lengths and throughput. */
  stats(): NativeEngineStats {
    return this.native.stats();
  }

  /** Resolves every pending piece 'cancelled', rejects pending scores and stops the engine; later calls throw. */
  close(): void {
    this.native.close();
  }
}

function toPiece(result: NativeEngineResult, draws: number): EnginePiece {
  return {
    tokens: Array.from(result.tokens),
    logprobs: Array.from(result.logprobs),
    ...(draws > 0 ? { draws: { tokens: result.drawTokens, logprobs: result.drawLogprobs } } : {}),
    finish: result.finish,
    policyVersion: result.policyVersion,
  };
}

/** What the engine samples from one row of logits at `tokenIndex`: draw 0, then numDraws − 1 extra draws. */
export function sampleLogits(logits: Float32Array, options: { temperature: number; seed: bigint | number; tokenIndex: number; numDraws?: number }): {
  tokens: Int32Array;
  logprobs: Float32Array;
} {
  return loadAddon().binding.sampleLogits(logits, options.temperature, options.seed, options.tokenIndex, options.numDraws ?? 1);
}
