// Which device runs the model and in what weight format: the `--device` and `--weights` flags of
// run, eval, bench and model logits, and the engine options of the same names (native/model/device.h).
import { loadAddon } from './addon.js';
import type { NativeRunnerDescription } from './binding.js';
import { NativeError } from '../errors.js';

/** 'auto' (the default): CUDA when this addon was built with it, a GPU is visible and cuBLASLt opens; else the CPU. */
export type DeviceChoice = 'auto' | 'cpu' | 'cuda';

/** Every device choice, in the order the CLI lists them. */
export const DEVICE_CHOICES: readonly DeviceChoice[] = ['auto', 'cpu', 'cuda'];

/**
 * 'stored': the checkpoint's dtypes; 'bf16': every f32 tensor rounded to BF16 at load (narrower ones kept);
 * 'fp8': linear weights quantized to FP8 E4M3 with 128×128 block scales at load.
 */
export type WeightFormat = 'stored' | 'bf16' | 'fp8';

/** Every weight format, in the order the CLI lists them. */
export const WEIGHT_FORMATS: readonly WeightFormat[] = ['stored', 'bf16', 'fp8'];

/** Where a model runs and in what form (both optional; defaults 'auto' and 'stored'). */
export interface DeviceOptions {
  readonly device?: DeviceChoice;
  readonly weights?: WeightFormat;
}

/** What a model runner computes with, as the native side describes it. */
export type RunnerDescription = Readonly<NativeRunnerDescription>;

/** Free and total bytes of CUDA device 0's memory now; throws NativeError where there is none (or the addon has no CUDA). */
export function deviceMemory(): { freeBytes: number; totalBytes: number } {
  try {
    return loadAddon().binding.deviceMemory();
  } catch (error) {
    throw new NativeError((error as Error).message);
  }
}

/** What `choice` means on this machine ('auto' → 'cuda' or 'cpu'); 'cuda' where CUDA cannot run throws with the reason. */
export function resolveDevice(choice: DeviceChoice = 'auto'): 'cpu' | 'cuda' {
  try {
    return loadAddon().binding.resolveDevice(choice);
  } catch (error) {
    throw new NativeError((error as Error).message);
  }
}
