// Where the RL loop's rollouts are sampled and how the trainer's new weights reach them: the
// in-process engine (weights copied from the trainer natively, between batches) or inference
// servers (`swarm train --inference-servers`): either the weights written to a folder the servers can
// read, RUN/serving/v{version}, each server asked to load it in its own API (ours, SGLang's or vLLM's,
// policy/server-weights.ts), or, with `--weight-transfer tcp|nccl` on our servers, sent to each over a
// weight link (policy/server-weight-links.ts) from a snapshot kept in memory, with no shared
// filesystem. Both number the weights versions the same way, so the policy-lag cap and the recorded
// dispatch versions do not depend on which runs the rollouts; a server that restarts is given the
// current weights again (the folder, or the snapshot) before it is asked for more pieces.

import fs from 'node:fs';
import path from 'node:path';
import { PolicyError } from '../policy/policy-error.js';
import type { RemotePolicy } from '../policy/remote-policy.js';
import { ServerWeightLinks, type WeightTransfer } from '../policy/server-weight-links.js';
import { loadServerWeights } from '../policy/server-weights.js';
import type { InferenceEngine } from '../native/engine.js';
import type { Trainer } from '../native/trainer.js';
import { WeightsSnapshot } from '../native/weights-snapshot.js';

/** What the RL loop needs of its rollouts' sampler. */
export interface RolloutBackend {
  /** Whether collection is a deterministic function of events (lockstep engine, or the remote turn clock). */
  readonly deterministic: boolean;
  /** The weights version new pieces are sampled with. */
  readonly version: number;
  /** Installs the trainer's current weights; returns their version (synchronously for the in-process engine). */
  install(trainer: Trainer): number | Promise<number>;
  /** Tokens sampled so far, and seconds the sampler waited for the harness (lockstep). */
  counters(): { generatedTokens: number; heldSeconds: number };
}

/** Rollouts on the in-process engine. */
export function engineRollouts(engine: InferenceEngine): RolloutBackend {
  return {
    deterministic: engine.deterministic,
    get version() {
      return engine.stats().policyVersion;
    },
    install: (trainer) => engine.loadWeightsFrom(trainer),
    counters: () => {
      const { generatedTokens, heldSeconds } = engine.stats();
      return { generatedTokens, heldSeconds };
    },
  };
}

/** What the servers must sample with (the config's rollout precision). */
export interface ServerNumerics {
  readonly weights: 'stored' | 'bf16' | 'fp8';
  readonly kvCacheDtype: 'f32' | 'bf16' | 'fp8';
}

/** How to reach the servers' side. */
export interface ServerRolloutsOptions {
  readonly policy: RemotePolicy;
  /** The run's folder for served weights (the servers must be able to read it: same machine or a shared filesystem). */
  readonly folder: string;
  /** tokenizer.json copied beside each version's weights. */
  readonly tokenizerPath: string;
  /** Written into each version's folder with the weights (the run's config). */
  readonly config: unknown;
  /** The version of the weights installed first. */
  readonly version: number;
  /** The numerics the run's config asks of the rollouts; our servers started otherwise are refused (SGLang and vLLM do not report theirs). */
  readonly numerics: ServerNumerics;
  /** How the weights reach the servers (default 'folder'; 'tcp' and 'nccl' need our servers). */
  readonly transfer?: WeightTransfer;
}

/** How many versions' folders stay on disk (pieces in flight may still be on the previous weights; they need no file). */
const KEEP_VERSIONS = 2;

/** Rollouts on inference servers. */
export class ServerRollouts implements RolloutBackend {
  readonly deterministic = true;
  private current: number;
  private currentFolder: string | null = null;
  private currentSnapshot: WeightsSnapshot | null = null;
  private readonly policy: RemotePolicy;
  private readonly options: ServerRolloutsOptions;
  private readonly links: ServerWeightLinks | null;

  private constructor(options: ServerRolloutsOptions) {
    this.options = options;
    this.policy = options.policy;
    this.current = options.version;
    const transfer = options.transfer ?? 'folder';
    if (transfer !== 'folder' && this.policy.serverProtocol !== 's3') {
      throw new PolicyError(`--weight-transfer ${transfer} needs our servers (swarm serve, protocol s3); ${this.policy.serverProtocol} servers load weights from a folder only`);
    }
    this.links = transfer === 'folder' ? null : new ServerWeightLinks(transfer);
    this.policy.reinstall = (url) =>
      this.links === null ? this.loadInto(url, this.currentFolder as string, this.current) : this.sendTo(url, this.currentSnapshot as WeightsSnapshot, this.current);
  }

  /**
   * Checks every server of ours samples with the run's numerics, then installs the weights in
   * `folder` (a checkpoint: the RL start, or a resumed run's engine checkpoint) as version
   * `options.version`.
   */
  static async start(options: ServerRolloutsOptions, folder: string): Promise<ServerRollouts> {
    for (const url of options.policy.serverProtocol === 's3' ? options.policy.urls : []) {
      const health = (await (await fetch(`${url}/health`)).json()) as Record<string, unknown>;
      const { weights, kvCacheDtype } = options.numerics;
      if (health.weights !== weights || health.kvCacheDtype !== kvCacheDtype) {
        throw new PolicyError(
          `inference server ${url} samples with ${String(health.weights)} weights and a ${String(health.kvCacheDtype)} KV cache; this run's precision asks for ${weights} and ${kvCacheDtype}: start it with swarm serve --weights ${weights} --kv-dtype ${kvCacheDtype}`,
        );
      }
    }
    const rollouts = new ServerRollouts(options);
    if (rollouts.links === null) await rollouts.installFolder(folder, options.version);
    else await rollouts.installSnapshot(WeightsSnapshot.ofCheckpoint(folder), options.version);
    return rollouts;
  }

  /** How the weights reach the servers. */
  get transfer(): WeightTransfer {
    return this.links?.transport ?? 'folder';
  }

  /** Closes the weight links and frees the snapshot they resend from (the folder path holds nothing open). */
  close(): void {
    this.links?.close();
    this.currentSnapshot?.release();
    this.currentSnapshot = null;
  }

  get version(): number {
    return this.current;
  }

  counters(): { generatedTokens: number; heldSeconds: number } {
    return { generatedTokens: this.policy.generatedTokens, heldSeconds: 0 };
  }

  async install(trainer: Trainer): Promise<number> {
    const version = this.current + 1;
    if (this.links !== null) {
      await this.installSnapshot(WeightsSnapshot.ofTrainer(trainer), version);
      return version;
    }
    const folder = path.join(this.options.folder, `v${version}`);
    const partial = `${folder}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(partial, { recursive: true });
    trainer.saveModel(partial, this.options.config);
    fs.copyFileSync(this.options.tokenizerPath, path.join(partial, 'tokenizer.json'));
    fs.rmSync(folder, { recursive: true, force: true });
    fs.renameSync(partial, folder);
    await this.installFolder(folder, version);
    this.prune();
    return version;
  }

  private async installFolder(folder: string, version: number): Promise<void> {
    await Promise.all(this.policy.urls.map((url) => this.loadInto(url, folder, version)));
    this.current = version;
    this.currentFolder = folder;
  }

  private async installSnapshot(snapshot: WeightsSnapshot, version: number): Promise<void> {
    // One server at a time: each send holds a thread of libuv's small pool until its server has it all.
    for (const url of this.policy.urls) await this.sendTo(url, snapshot, version);
    this.current = version;
    this.currentSnapshot?.release();
    this.currentSnapshot = snapshot;
  }

  private async sendTo(url: string, snapshot: WeightsSnapshot, version: number): Promise<void> {
    const links = this.links as ServerWeightLinks;
    await this.policy.install(url, version, () => links.send(url, snapshot));
  }

  private async loadInto(url: string, folder: string, version: number): Promise<void> {
    const protocol = this.policy.serverProtocol;
    await this.policy.install(url, version, () =>
      loadServerWeights(protocol, url, folder, version).catch((error: Error) => {
        throw error instanceof PolicyError ? error : new PolicyError(`inference server ${url}: loading the weights of version ${version} from ${folder} failed: ${error.message}`);
      }),
    );
  }

  private prune(): void {
    const versions = fs
      .readdirSync(this.options.folder)
      .map((name) => /^v(\d+)$/.exec(name))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => Number(match[1]))
      .sort((a, b) => b - a);
    for (const old of versions.slice(KEEP_VERSIONS)) fs.rmSync(path.join(this.options.folder, `v${old}`), { recursive: true, force: true });
  }
}
