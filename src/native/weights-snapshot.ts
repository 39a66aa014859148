// One weights version as its checkpoint folder would hold it (config.json and the tensors as stored:
// a trainer's f32 parameters, or a checkpoint's own), sent to inference servers over weight links
// (native/model/weight_link.h): rank 0 of a connected two-rank Collective sends, the server's engine
// receives (InferenceEngine.receiveWeights) and ends with the weights loading that folder gives. Kept
// by the sender so a server that restarts can be given the version it should sample with, even
// after the trainer has taken further steps.
import { loadAddon } from './addon.js';
import { NativeError } from '../errors.js';
import type { NativeWeightsSnapshot } from './binding.js';
import type { Collective } from './collective.js';
import type { Trainer } from './trainer.js';

export class WeightsSnapshot {
  private constructor(private readonly native: NativeWeightsSnapshot) {}

  /** A copy of the trainer's current parameters, as Trainer.save writes them (refused while it accumulates). */
  static ofTrainer(trainer: Trainer): WeightsSnapshot {
    const { binding } = loadAddon();
    try {
      return new WeightsSnapshot(new binding.WeightsSnapshot(trainer.nativeHandle));
    } catch (error) {
      throw new NativeError(`cannot take the trainer's weights: ${(error as Error).message}`);
    }
  }

  /** The Hugging Face checkpoint in `directory`: its config.json and tensors as stored. */
  static ofCheckpoint(directory: string): WeightsSnapshot {
    const { binding } = loadAddon();
    try {
      return new WeightsSnapshot(new binding.WeightsSnapshot(directory));
    } catch (error) {
      throw new NativeError(`cannot read the weights in ${directory}: ${(error as Error).message}`);
    }
  }

  /** Tensor bytes it holds (what a send moves, besides the config and the tensor table). */
  get bytes(): number {
    return this.native.bytes();
  }

  /** The model's shape, as error messages show it. */
  get shape(): string {
    return this.native.shape();
  }

  /** Frees its bytes now rather than at garbage collection (a send under way keeps them until it ends). */
  release(): void {
    this.native.release();
  }

  /** Sends the parameters to the other rank of `link` (this side is rank 0); resolves once they are all out. */
  async send(link: Collective): Promise<{ bytes: number; seconds: number }> {
    try {
      return await this.native.send(link.nativeHandle);
    } catch (error) {
      throw new NativeError(`sending weights over ${link.description} failed: ${(error as Error).message}`);
    }
  }
}
