// Typed access to the native trainer (native/train): f32 master weights of a Qwen3 checkpoint,
// gradients of the s³ losses (SFT / weighted cross-entropy and the IcePop policy gradient of
// SPEC §6) accumulated over packed micro-batches, AdamW steps, and checkpoints that resume
// bit-identically; on the CPU or a CUDA device (the `device` option).
import { loadAddon } from './addon.js';
import { NativeError } from '../errors.js';
import type { NativeNamedTensor, NativeTrainDiagnostics, NativeTrainer, NativeTrainerOptions } from './binding.js';
import type { Collective } from './collective.js';

export type { NativeNamedTensor, NativeTrainDiagnostics, NativeTrainerOptions } from './binding.js';

/** Storage of AdamW's moments (NativeTrainerOptions.optimizerStateDtype): f32, or bf16 with stochastic rounding (half the memory). */
export type OptimizerStateDtype = NonNullable<NativeTrainerOptions['optimizerStateDtype']>;
export const OPTIMIZER_STATE_DTYPES: readonly OptimizerStateDtype[] = ['f32', 'bf16'];
/** The trainer's matmul precision (NativeTrainerOptions.matmulPrecision): f32, or BF16 operands with f32 sums. */
export type MatmulPrecision = NonNullable<NativeTrainerOptions['matmulPrecision']>;
export const MATMUL_PRECISIONS: readonly MatmulPrecision[] = ['f32', 'bf16'];

/** One sequence of a micro-batch: coef[t] weights log p(tokens[t+1] | tokens[0..t]), so coef has tokens.length − 1 entries. */
export interface TrainSequence {
  tokens: readonly number[];
  coef: readonly number[];
  /** Policy gradient only: the sampler's log-probs, aligned with coef. */
  oldLogprobs?: readonly number[];
  /** Score centering (policy gradient only): K draws per prediction, flattened [coef.length × K], with their sampler log-probs. */
  draws?: { tokens: readonly number[]; logprobs: readonly number[] };
  /** KL penalty (policy gradient only): the frozen reference policy's log-probs of the same tokens, aligned with coef. */
  refLogprobs?: readonly number[];
  /** KL penalty: each token's weight w ≥ 0, aligned with coef (1/|T_g|/|B| on generated tokens, 0 elsewhere; never signed by the advantage). */
  klWeight?: readonly number[];
}

/** Options of one accumulate call. */
export interface AccumulateOptions {
  /** Draws per prediction for score centering (Appendix A.1); every sequence must then carry draws. */
  numDraws?: number;
  /** β of the KL penalty β·Σ_t w_t·KL_t (k3 estimator; docs/training.md); 0 or absent: off. Every sequence must then carry refLogprobs and klWeight. */
  klCoef?: number;
  /**
   * Policy gradient: the temperature the rollouts were sampled at (default 1). π_θ is then
   * softmax(logits / T), the distribution the sampler's log-probs μ were recorded under, in the
   * ratio, the entropy, the draws' log-probs and the KL's log-probs.
   */
  temperature?: number;
}

export class Trainer {
  private constructor(
    readonly directory: string,
    private readonly native: NativeTrainer,
  ) {}

  /** @internal The native trainer, for InferenceEngine.loadWeightsFrom (reads its parameters in place). */
  get nativeHandle(): NativeTrainer {
    return this.native;
  }

  /**
   * Loads a Hugging Face Qwen3 folder (any dtype); a folder written by save() also restores the optimizer and step
   * (unless `freshOptimizer`: a new training stage starts AdamW afresh from the saved weights).
   * `optimizerStateDtype` ('f32' default, or 'bf16') must match the dtype such a folder's optimizer state was saved in.
   */
  static open(directory: string, options: NativeTrainerOptions = {}): Trainer {
    const { binding } = loadAddon();
    try {
      return new Trainer(directory, new binding.Trainer(directory, options));
    } catch (error) {
      throw new NativeError(`cannot open a trainer on ${directory}: ${(error as Error).message}`);
    }
  }

  /**
   * Adds the gradient of the loss over these sequences (packed into one micro-batch) to the accumulated gradients.
   * `sumOver` (data parallel): this is the rank's last micro-batch of the update; the gradients are then summed over
   * the collective's ranks in buckets as the backward finishes each layer (overlapped on the CPU), instead of by a
   * later allReduceGradients. Every rank of the group sums with one or the other, the same buckets in the same order.
   */
  async accumulate(kind: 'sft' | 'pg', sequences: readonly TrainSequence[], options: AccumulateOptions = {}, sumOver?: Collective): Promise<NativeTrainDiagnostics> {
    const total = sequences.reduce((n, s) => n + s.tokens.length, 0);
    const K = options.numDraws ?? 0;
    const drawTokens = K > 0 ? new Int32Array(total * K).fill(-1) : undefined;
    const drawLogprobs = K > 0 ? new Float32Array(total * K) : undefined;
    const tokens = new Int32Array(total);
    const coef = new Float32Array(total);
    const old = kind === 'pg' ? new Float32Array(total) : undefined;
    const klCoef = options.klCoef ?? 0;
    const refLogprobs = klCoef !== 0 ? new Float32Array(total) : undefined;
    const klWeight = klCoef !== 0 ? new Float32Array(total) : undefined;
    const seqLengths = new Int32Array(sequences.length);
    let at = 0;
    sequences.forEach((s, i) => {
      if (s.tokens.length < 1) throw new NativeError('accumulate: every sequence needs at least one token');
      if (s.coef.length !== s.tokens.length - 1) {
        throw new NativeError(`accumulate: sequence ${i} has ${s.tokens.length} tokens but ${s.coef.length} coefficients (want ${s.tokens.length - 1})`);
      }
      if (old && s.oldLogprobs?.length !== s.coef.length) {
        throw new NativeError(`accumulate: sequence ${i} needs ${s.coef.length} oldLogprobs for the policy gradient`);
      }
      tokens.set(s.tokens, at);
      coef.set(s.coef, at);
      if (old && s.oldLogprobs) old.set(s.oldLogprobs, at);
      if (drawTokens && drawLogprobs) {
        if (s.draws?.tokens.length !== s.coef.length * K || s.draws.logprobs.length !== s.coef.length * K) {
          throw new NativeError(`accumulate: sequence ${i} needs ${s.coef.length * K} draws (coef.length × numDraws) with their log-probs`);
        }
        drawTokens.set(s.draws.tokens, at * K);
        drawLogprobs.set(s.draws.logprobs, at * K);
      }
      if (refLogprobs && klWeight) {
        if (s.refLogprobs?.length !== s.coef.length || s.klWeight?.length !== s.coef.length) {
          throw new NativeError(`accumulate: sequence ${i} needs ${s.coef.length} refLogprobs and klWeight for the KL penalty (klCoef ${klCoef})`);
        }
        refLogprobs.set(s.refLogprobs, at);
        klWeight.set(s.klWeight, at);
      }
      seqLengths[i] = s.tokens.length;
      at += s.tokens.length;
    });
    try {
      return await this.native.accumulate({
        kind,
        tokens,
        seqLengths,
        coef,
        ...(old ? { oldLogprobs: old } : {}),
        ...(drawTokens && drawLogprobs ? { numDraws: K, drawTokens, drawLogprobs } : {}),
        ...(refLogprobs && klWeight ? { klCoef, refLogprobs, klWeight } : {}),
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      }, sumOver?.nativeHandle);
    } catch (error) {
      throw new NativeError(`accumulate failed: ${(error as Error).message}`);
    }
  }

  /** One AdamW update from the accumulated gradients (clipped to the global norm), which are then zeroed. */
  step(): { gradNorm: number; lr: number; step: number } {
    return this.native.step();
  }

  zeroGrad(): void {
    this.native.zeroGrad();
  }

  /** Data-parallel training: the accumulated gradients summed over every rank of `collective` (each accumulated its share of the batch). */
  async allReduceGradients(collective: Collective): Promise<void> {
    try {
      await this.native.allReduceGradients(collective.nativeHandle);
    } catch (error) {
      throw new NativeError(`allReduceGradients failed: ${(error as Error).message}`);
    }
  }

  /** 16 hex digits of a hash of the parameters' bits: ranks that hold the same weights agree. */
  parameterFingerprint(): string {
    return this.native.parameterFingerprint();
  }

  /** Writes config.json, model.safetensors (F32), optimizer.safetensors (moments in the optimizer state dtype), run_config.json (when given) and trainer_state.json, each atomically. */
  save(directory: string, runConfig?: unknown): void {
    const json = runConfig === undefined ? undefined : JSON.stringify(runConfig, null, 2) + '\n';
    this.wrap(`save to ${directory}`, () => this.native.save(directory, json));
  }

  /** The weights alone, as save() writes them (config.json, model.safetensors, runConfig as run_config.json): what an inference engine loads. */
  saveModel(directory: string, runConfig?: unknown): void {
    const json = runConfig === undefined ? undefined : JSON.stringify(runConfig, null, 2) + '\n';
    this.wrap(`saveModel to ${directory}`, () => this.native.saveModel(directory, json));
  }

  /** Restores weights, optimizer moments and step from a folder written by save() with the same optimizer state dtype (else refused). */
  load(directory: string): void {
    this.wrap(`load from ${directory}`, () => this.native.load(directory));
  }

  /** The accumulated gradients as F32 safetensors under the checkpoint's tensor names. */
  saveGradients(file: string): void {
    this.wrap(`saveGradients to ${file}`, () => this.native.saveGradients(file));
  }

  stepCount(): number {
    return this.native.stepCount();
  }

  /** Where it computes: "cpu (avx512, 2 threads)" or "cuda:0 (NVIDIA H200, cublasLt 13.0.2)". */
  get device(): string {
    return this.native.device();
  }

  setLr(lr: number): void {
    this.native.setLr(lr);
  }

  /** Copies of the current weights (F32) under the checkpoint's names, for the inference engine. */
  tensors(): NativeNamedTensor[] {
    return this.native.tensors();
  }

  /** Copies of the accumulated gradients. */
  gradients(): NativeNamedTensor[] {
    return this.native.gradients();
  }

  private wrap(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      throw new NativeError(`${what} failed: ${(error as Error).message}`);
    }
  }
}
