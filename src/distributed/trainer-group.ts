// The trainer as the RL loop sees it, on one rank or many (data parallel): rank 0's own trainer,
// plus, with more than one rank, the ranks it drives through the rendezvous (rendezvous.ts). Each
// batch's sequences are dealt over the ranks (deal-sequences.ts: the same split every run); every
// rank accumulates its share at the same time, then all sum their gradients
// over the collective (a host ring, or NCCL on CUDA) and take the same AdamW step. Rank 0 keeps
// writing checkpoints and handing weights to the engine; the others write nothing. With fingerprints
// asked for, every rank reports a hash of its parameters after the step and ranks that differ from
// rank 0 stop the run (their updates must be bit-identical). Any rank's failure (an error, an exit,
// a timeout) fails the call that needed it, naming the rank; the run then stops, and --resume
// continues from the last committed update.
import { type ChildProcess } from 'node:child_process';
import { DistributedError } from '../errors.js';
import { Collective, ncclUniqueId } from '../native/collective.js';
import type { NativeTrainDiagnostics, NativeTrainerOptions } from '../native/binding.js';
import type { AccumulateOptions, Trainer, TrainSequence } from '../native/trainer.js';
import { RendezvousServer } from './rendezvous.js';
import { encodeShare } from './share-codec.js';
import type { RankEnvironment } from './rank-environment.js';
import { accumulateShare, connectCollective, stepRank, type RankStep, type TrainerGroupSession, type TrainerWorkerCommands } from './trainer-worker.js';
import { spawnLocalRanks } from './local-ranks.js';

/** How the group's ranks ≥ 1 start: spawned here (one process each), or by a launcher (torchrun, Slurm) that already did. */
export type RankLaunch = { kind: 'local' } | { kind: 'launcher' };

export interface TrainerGroupOptions {
  /** Rank 0's trainer, opened on `checkpoint` with `trainerOptions`; every other rank opens the same. */
  trainer: Trainer;
  checkpoint: string;
  trainerOptions: NativeTrainerOptions;
  worldSize: number;
  /** The device the trainers run on (decides the collective: NCCL on CUDA where it loads, else the host ring). */
  device: 'cpu' | 'cuda';
  /** Where rank 0 serves the rendezvous (port 0: any free one; local launches only), and the host the other ranks reach it and its ring by. */
  rendezvous: { host: string; port: number; advertise: string };
  launch: RankLaunch;
  /** Every wait's deadline: joining, connecting, each command and each collective. */
  timeoutMs: number;
}

export class TrainerGroup {
  private constructor(
    readonly trainer: Trainer,
    private readonly collective: Collective | null,
    private readonly server: RendezvousServer<TrainerGroupSession> | null,
    private readonly children: readonly ChildProcess[],
    readonly ranks: number,
    /** "1 rank" or "2 ranks (host ring)". */
    readonly description: string,
    /** The ranks ≥ 1 were started by a launcher: they live on after this group and join the next. */
    private readonly launched = false,
    /** Every wait's deadline (TrainerGroupOptions.timeoutMs). */
    private readonly timeoutMs = 0,
  ) {}

  /** Whether the last accumulateShares summed the gradients over the ranks (a step may follow). */
  private summed = false;

  /** A group of one: rank 0's trainer alone (no collective). */
  static single(trainer: Trainer): TrainerGroup {
    return new TrainerGroup(trainer, null, null, [], 1, '1 rank');
  }

  /** Starts the rendezvous, launches (or waits for) ranks 1…R−1, connects the collective and opens every rank's trainer. */
  static async open(options: TrainerGroupOptions): Promise<TrainerGroup> {
    const { worldSize, timeoutMs } = options;
    if (worldSize === 1) return TrainerGroup.single(options.trainer);
    const kind = options.device === 'cuda' && ncclAvailable() ? 'nccl' : 'host';
    const session: TrainerGroupSession & { collective: 'host' | 'nccl' } = { collective: kind, timeoutMs, ...(kind === 'nccl' ? { ncclId: Buffer.from(ncclUniqueId()).toString('base64') } : {}) };
    const ring = Collective.hostRing({ rank: 0, ranks: worldSize, timeoutMs });
    const server = new RendezvousServer<TrainerGroupSession>({ worldSize, session, self: { host: options.rendezvous.advertise, port: ring.port }, timeoutMs });
    let children: ChildProcess[] = [];
    try {
      const port = await server.listen(options.rendezvous.host, options.rendezvous.port);
      const url = `http://${options.rendezvous.advertise}:${port}`;
      if (options.launch.kind === 'local') {
        children = spawnLocalRanks({ url, worldSize, timeoutMs, device: options.device, onExit: (rank, reason) => server.rankLost(rank, reason) });
      }
      const members = await server.membersJoined();
      const collective = await connectCollective(0, worldSize, ring, session, members[1 % worldSize] as { host: string; port: number });
      const group = new TrainerGroup(options.trainer, collective, server, children, worldSize, `${worldSize} ranks (${kind === 'nccl' ? 'NCCL' : 'host ring'})`, options.launch.kind === 'launcher', timeoutMs);
      const fingerprint = options.trainer.parameterFingerprint();
      const opened = (await group.onOthers('open', { directory: options.checkpoint, options: options.trainerOptions } satisfies TrainerWorkerCommands['open'])) as { fingerprint: string; step: number }[];
      opened.forEach((o, i) => {
        if (o.fingerprint !== fingerprint || o.step !== options.trainer.stepCount()) {
          throw new DistributedError(`trainer rank ${i + 1} opened ${options.checkpoint} with other weights or another step than rank 0 (is the folder the same on every node?)`);
        }
      });
      return group;
    } catch (error) {
      ring.close();
      await server.close();
      stopChildren(children);
      throw error;
    }
  }

  private onOthers(op: string, args?: unknown): Promise<unknown[]> {
    const server = this.server as RendezvousServer<TrainerGroupSession>;
    return Promise.all(Array.from({ length: this.ranks - 1 }, (_, i) => server.call(i + 1, op, args)));
  }

  /**
   * Accumulates each rank's share, given as its micro-batches (shares[r] for rank r; dealSequences
   * splits a batch), all ranks at once; with `sum` (an update that will step) the gradients are then
   * summed over the ranks, overlapped with each rank's last backward. The diagnostics of every
   * micro-batch, rank 0's first.
   */
  async accumulateShares(kind: 'sft' | 'pg', shares: readonly (readonly (readonly TrainSequence[])[])[], options: AccumulateOptions & { sum: boolean }): Promise<NativeTrainDiagnostics[]> {
    if (shares.length !== this.ranks) throw new DistributedError(`accumulateShares: ${shares.length} shares for ${this.ranks} ranks`);
    const { sum, ...accumulateOptions } = options;
    const summing = sum && this.ranks > 1;
    const server = this.server;
    const work = [
      accumulateShare(this.trainer, this.collective, { kind, micros: shares[0] ?? [], options: accumulateOptions, sum: summing }),
      ...shares.slice(1).map((micros, i) => {
        if (server === null || (micros.length === 0 && !sum)) return Promise.resolve([]);
        const args: Omit<TrainerWorkerCommands['accumulate'], 'micros'> = { kind, options: accumulateOptions, sum: summing };
        // The deadline grows with the share: each micro-batch (and the sum) may take up to the timeout.
        return server.call(i + 1, 'accumulate', args, this.timeoutMs * (micros.length + 1), encodeShare(micros)) as Promise<NativeTrainDiagnostics[]>;
      }),
    ];
    // Every rank settles before anything is thrown: rank 0's sum is not left running on the collective.
    const settled = await Promise.allSettled(work);
    for (const result of settled) if (result.status === 'rejected') throw result.reason;
    this.summed = sum;
    return settled.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
  }

  /** The AdamW step on every rank, after accumulateShares summed the gradients; with `verifyFingerprints`, checks every rank holds rank 0's parameters after it. */
  async step(options: { verifyFingerprints: boolean }): Promise<{ gradNorm: number; lr: number; step: number }> {
    if (this.server === null) return this.trainer.step();
    if (!this.summed) throw new DistributedError('TrainerGroup.step: the gradients were not summed over the ranks (accumulateShares with sum: true comes first)');
    this.summed = false;
    const self = stepRank(this.trainer, options.verifyFingerprints);
    const others = (await this.onOthers('step', { fingerprint: options.verifyFingerprints } satisfies TrainerWorkerCommands['step'])) as RankStep[];
    others.forEach((other, i) => {
      if (other.step !== self.step || other.gradNorm !== self.gradNorm || other.fingerprint !== self.fingerprint) {
        throw new DistributedError(
          `trainer rank ${i + 1} diverged from rank 0 at step ${self.step}: gradient norm ${other.gradNorm} vs ${self.gradNorm}${options.verifyFingerprints ? `, parameters ${other.fingerprint} vs ${self.fingerprint}` : ''}`,
        );
      }
    });
    return { gradNorm: self.gradNorm, lr: self.lr, step: self.step };
  }

  async zeroGrad(): Promise<void> {
    this.summed = false;
    this.trainer.zeroGrad();
    if (this.server !== null) await this.onOthers('zeroGrad', {});
  }

  async setLr(lr: number): Promise<void> {
    this.trainer.setLr(lr);
    if (this.server !== null) await this.onOthers('setLr', { lr } satisfies TrainerWorkerCommands['setLr']);
  }

  /** The process ids of the ranks spawned here, rank 1 first (empty under a launcher or alone). */
  get localRankPids(): number[] {
    return this.children.map((child) => child.pid ?? -1);
  }

  /** Ends the other ranks (they exit) and the rendezvous; rank 0's trainer stays open. */
  async close(): Promise<void> {
    if (this.server !== null && this.launched) {
      // Launched ranks outlive the group: they join the next stage's, or dismissLaunchedRanks ends them.
      await this.onOthers('end', { rejoin: true } satisfies TrainerWorkerCommands['end']).catch(() => undefined);
    }
    await this.server?.close();
    try {
      this.collective?.close();
    } catch {
      // still in use by a failed collective's last wait: its sockets close with the process
    }
    await waitForChildren(this.children, 10_000);
  }
}

function ncclAvailable(): boolean {
  try {
    ncclUniqueId();
    return true;
  } catch {
    return false;
  }
}

function stopChildren(children: readonly ChildProcess[]): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
}

/** Waits for the children to exit by themselves, then kills what is left. */
async function waitForChildren(children: readonly ChildProcess[], timeoutMs: number): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
        }),
    ),
  );
}

/**
 * Under a launcher (torchrun, Slurm), ends ranks ≥ 1 when rank 0's run is over: they wait between
 * stages for the next group, so rank 0 opens one last rendezvous that only tells them to exit. Ranks
 * that do not join within `timeoutMs` (already gone) are left to the launcher. Nothing to do without
 * a launcher: ranks spawned by a group exit with it.
 */
export async function dismissLaunchedRanks(launcher: RankEnvironment, timeoutMs: number): Promise<void> {
  if (launcher.rank !== 0 || launcher.worldSize === 1) return;
  const server = new RendezvousServer<TrainerGroupSession>({ worldSize: launcher.worldSize, session: { collective: 'none', timeoutMs }, self: { host: launcher.masterAddr, port: 0 }, timeoutMs });
  try {
    await server.listen('0.0.0.0', launcher.rendezvousPort);
    await server.membersJoined();
    await Promise.allSettled(Array.from({ length: launcher.worldSize - 1 }, (_, i) => server.call(i + 1, 'end', { rejoin: false } satisfies TrainerWorkerCommands['end'])));
  } catch (error) {
    process.emitWarning(`could not dismiss every trainer rank: ${(error as Error).message}`);
  } finally {
    await server.close();
  }
}
