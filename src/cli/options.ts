// Parsing helpers for command-line values: integers, lists and fixed choices, with errors that name
// the flag; and the --device / --weights pair every command that runs a model takes.
import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import { DEVICE_CHOICES, WEIGHT_FORMATS } from '../native/device.js';
import type { DeviceOptions } from '../native/device.js';

/** Parses a non-negative integer flag value, or throws a ConfigError naming the flag. */
export function parseIntegerFlag(flag: string, value: string, minimum = 0): number {
  if (!/^-?\d+$/.test(value.trim())) throw new ConfigError(`${flag} must be an integer, got "${value}"`);
  const parsed = Number.parseInt(value, 10);
  if (parsed < minimum) throw new ConfigError(`${flag} must be at least ${minimum}, got ${parsed}`);
  return parsed;
}

/** Parses a comma-separated list of integers, e.g. "1,2,4,8". */
export function parseIntegerListFlag(flag: string, value: string, minimum = 0): number[] {
  const parts = value.split(',').map((p) => p.trim()).filter((p) => p.length > 0);
  if (parts.length === 0) throw new ConfigError(`${flag} needs at least one integer, got "${value}"`);
  return parts.map((p) => parseIntegerFlag(flag, p, minimum));
}

/** Parses one of a fixed set of values, e.g. "bf16" of ["f32", "bf16"]. */
export function parseChoiceFlag<T extends string>(flag: string, value: string, choices: readonly T[]): T {
  const found = choices.find((c) => c === value.trim());
  if (found === undefined) throw new ConfigError(`${flag} must be ${choices.join(' or ')}, got "${value}"`);
  return found;
}

/** The help text of --kv-dtype. */
export const KV_DTYPE_HELP =
  'element type of the KV cache: f32 | bf16 (half the memory and the bytes a decode step reads) | fp8 (e4m3 with a scale per row: about a quarter)';

/** Adds --device and --weights to a command that runs a model. */
export function addDeviceFlags(command: Command): Command {
  return command
    .option('--device <device>', 'auto (CUDA when a usable GPU exists, else the CPU) | cpu | cuda', 'auto')
    .option('--weights <format>', 'stored (the checkpoint\'s dtypes) | bf16 (f32 tensors rounded to BF16 at load) | fp8 (linear weights quantized to FP8 with 128×128 block scales at load)', 'stored');
}

/** Adds --kv-cache-mb and --max-sequences to a command that opens an inference engine (defaults: policy/engine-sizing.ts). */
export function addEngineSizeFlags(command: Command): Command {
  return command
    .option('--kv-cache-mb <mb>', 'the engine\'s KV cache in MiB (default: 1024 on the CPU, half the free device memory on CUDA)')
    .option('--max-sequences <n>', 'sequences in one engine step (default: 64 on the CPU, 256 on CUDA)');
}

/** The engine sizes --kv-cache-mb and --max-sequences give (absent: sized for the device). */
export function parseEngineSizeFlags(options: { kvCacheMb?: string; maxSequences?: string }): { kvCacheBytes?: number; maxSequences?: number } {
  return {
    ...(options.kvCacheMb === undefined ? {} : { kvCacheBytes: parseIntegerFlag('--kv-cache-mb', options.kvCacheMb, 1) * 1024 * 1024 }),
    ...(options.maxSequences === undefined ? {} : { maxSequences: parseIntegerFlag('--max-sequences', options.maxSequences, 1) }),
  };
}

/** Adds --device to a command that trains (train, sft): the config's `device`, which places the trainer and the engine. */
export function addTrainDeviceFlag(command: Command): Command {
  return command.option('--device <device>', "where the trainer and the engine run: auto (CUDA when a usable GPU exists, else the CPU) | cpu | cuda; the same as --set device=… (default: the preset's)");
}

/** The --set list with --device folded in (it is the config field `device`; given last, it wins over a --set). */
export function withDeviceSet(sets: readonly string[] | undefined, device: string | undefined): string[] | undefined {
  return device === undefined ? sets?.slice() : [...(sets ?? []), `device=${device}`];
}

/** Adds --nondeterministic: the engine runs ahead of the harness instead of in lockstep (docs/determinism.md). */
export function addDeterminismFlag(command: Command): Command {
  return command.option('--nondeterministic', 'let the inference engine run ahead while the harness reacts (results then depend on timing; docs/determinism.md)');
}

/** The engine's `deterministic` option from --nondeterministic. */
export function parseDeterminismFlag(options: { nondeterministic?: boolean }): { deterministic: boolean } {
  return { deterministic: options.nondeterministic !== true };
}

/** The parsed --device and --weights values. */
export function parseDeviceFlags(options: { device?: string; weights?: string }): DeviceOptions {
  return {
    device: parseChoiceFlag('--device', options.device ?? 'auto', DEVICE_CHOICES),
    weights: parseChoiceFlag('--weights', options.weights ?? 'stored', WEIGHT_FORMATS),
  };
}

/** Parses --server URL[,URL...]: http(s) base URLs of inference servers. */
export function parseServerList(value: string): string[] {
  const urls = value.split(',').map((part) => part.trim()).filter((part) => part.length > 0);
  if (urls.length === 0) throw new ConfigError(`--server needs at least one URL, got "${value}"`);
  for (const url of urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`--server: "${url}" is not a URL; expected e.g. http://127.0.0.1:8000`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`--server: "${url}" must be an http:// or https:// URL`);
  }
  return urls;
}
