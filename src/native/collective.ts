// Typed access to the native collectives (native/core/collective.h): one rank's membership in a
// data-parallel group of trainers, a host ring over TCP (any device; the CPU path and the fallback)
// or an NCCL group (CUDA builds with NCCL). Every collective waits at most its timeout, then fails
// naming the rank and the collective; a group that failed once refuses every later call.
import { loadAddon } from './addon.js';
import { NativeError } from '../errors.js';
import type { NativeCollective, NativeCollectiveOptions } from './binding.js';

export type CollectiveOptions = NativeCollectiveOptions;

export class Collective {
  private constructor(private readonly native: NativeCollective) {}

  /** @internal For Trainer.allReduceGradients. */
  get nativeHandle(): NativeCollective {
    return this.native;
  }

  /** A host ring member, listening at once on `bindHost` (default 0.0.0.0) and `port` (default any: see port). */
  static hostRing(options: Omit<Extract<NativeCollectiveOptions, { kind: 'host' }>, 'kind'>): Collective {
    return Collective.create({ kind: 'host', ...options });
  }

  /** An NCCL group member, named by the id rank 0 made with ncclUniqueId(); connect() joins it. */
  static nccl(options: Omit<Extract<NativeCollectiveOptions, { kind: 'nccl' }>, 'kind'>): Collective {
    return Collective.create({ kind: 'nccl', ...options });
  }

  private static create(options: NativeCollectiveOptions): Collective {
    const { binding } = loadAddon();
    try {
      return new Collective(new binding.Collective(options));
    } catch (error) {
      throw new NativeError(`cannot make a ${options.kind} collective for rank ${options.rank} of ${options.ranks}: ${(error as Error).message}`);
    }
  }

  /** The host ring's listening port (0 for NCCL). */
  get port(): number {
    return this.native.port();
  }

  get description(): string {
    return this.native.description();
  }

  /** Host ring: connects to the next rank at host:port and accepts the previous one; NCCL: joins the group. */
  async connect(next?: { host: string; port: number }): Promise<void> {
    try {
      await (next === undefined ? this.native.connect() : this.native.connect(next.host, next.port));
    } catch (error) {
      throw new NativeError(`collective connect failed: ${(error as Error).message}`);
    }
  }

  close(): void {
    this.native.close();
  }
}

/** A new NCCL group id (rank 0), or the reason there is none (no CUDA build, no NCCL). */
export function ncclUniqueId(): Uint8Array {
  const { binding } = loadAddon();
  try {
    return binding.ncclUniqueId();
  } catch (error) {
    throw new NativeError(`no NCCL group id: ${(error as Error).message}`);
  }
}
