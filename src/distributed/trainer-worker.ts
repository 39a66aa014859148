// A data-parallel trainer rank ≥ 1 (`swarm trainer-worker`, or `swarm train` under torchrun or
// Slurm with RANK ≥ 1): joins rank 0's rendezvous, connects the group's collective (a host ring, or
// NCCL on CUDA), opens its own trainer on the checkpoint rank 0 names, and then runs rank 0's
// commands in order: accumulate its share of each batch's micro-batches with the sum of the
// gradients over the group, the AdamW step (every rank the same), zeroing, a new learning rate. It writes
// nothing: checkpoints are rank 0's. It exits when rank 0 ends the stream, and fails (the process
// exits non-zero) when rank 0 goes away or the collective fails.
import { DistributedError } from '../errors.js';
import { Collective } from '../native/collective.js';
import type { NativeTrainDiagnostics, NativeTrainerOptions } from '../native/binding.js';
import { Trainer, type AccumulateOptions, type TrainSequence } from '../native/trainer.js';
import { decodeShare } from './share-codec.js';
import { joinRendezvous, serveRendezvousCommands, type RankCommand } from './rendezvous.js';
import { visibleDeviceForRank, type RankEnvironment } from './rank-environment.js';

/** What rank 0 tells every rank when the group has joined. */
export interface TrainerGroupSession {
  /** 'none': no training follows; rank 0 only dismisses the launched ranks (dismissLaunchedRanks). */
  collective: 'host' | 'nccl' | 'none';
  /** NCCL: rank 0's ncclUniqueId, base64. */
  ncclId?: string;
  timeoutMs: number;
}

/** The commands of rank 0, with their arguments. */
export interface TrainerWorkerCommands {
  open: { directory: string; options: NativeTrainerOptions };
  /** With `sum`, the gradients are summed over the group once this share is in (every rank is sent it). The micro-batches travel as the command's payload (share-codec.ts). */
  accumulate: { kind: 'sft' | 'pg'; micros: readonly (readonly TrainSequence[])[]; options: AccumulateOptions; sum: boolean };
  step: { fingerprint: boolean };
  zeroGrad: Record<string, never>;
  setLr: { lr: number };
  /** The group ends; `rejoin`: another stage's group follows (launched ranks join it). */
  end: { rejoin: boolean };
}

/** What a rank answers to step. */
export interface RankStep {
  gradNorm: number;
  lr: number;
  step: number;
  fingerprint?: string;
}

/** Opens the group's collective on this rank: the host ring to the next rank, or the NCCL group. */
export async function connectCollective(rank: number, worldSize: number, ring: Collective, session: TrainerGroupSession & { collective: 'host' | 'nccl' }, next: { host: string; port: number }): Promise<Collective> {
  if (session.collective === 'host') {
    await ring.connect(next);
    return ring;
  }
  ring.close();
  const nccl = Collective.nccl({ rank, ranks: worldSize, timeoutMs: session.timeoutMs, id: new Uint8Array(Buffer.from(session.ncclId ?? '', 'base64')) });
  await nccl.connect();
  return nccl;
}

/**
 * One rank's share of an update (rank 0 runs the same): its micro-batches, and with `sum` the
 * gradients summed over the group, as the last micro-batch's backward goes (or, with no micro-batch,
 * afterwards: the same buckets, so the ranks' collectives pair up).
 */
export async function accumulateShare(trainer: Trainer, collective: Collective | null, share: TrainerWorkerCommands['accumulate']): Promise<NativeTrainDiagnostics[]> {
  const parts: NativeTrainDiagnostics[] = [];
  const sumOver = share.sum ? collective : null;
  for (const [i, micro] of share.micros.entries()) {
    const last = i === share.micros.length - 1;
    parts.push(await trainer.accumulate(share.kind, micro, share.options, last && sumOver !== null ? sumOver : undefined));
  }
  if (sumOver !== null && share.micros.length === 0) await trainer.allReduceGradients(sumOver);
  return parts;
}

/** One rank's AdamW step on the summed gradients, with its parameters' fingerprint when asked. */
export function stepRank(trainer: Trainer, fingerprint: boolean): RankStep {
  const step = trainer.step();
  return { ...step, ...(fingerprint ? { fingerprint: trainer.parameterFingerprint() } : {}) };
}

/**
 * Runs rank `rank` in one group until rank 0 ends it; resolves with whether rank 0 said another
 * stage's group follows (launched ranks then join again). `joinTimeoutMs` (default timeoutMs) bounds
 * the wait for rank 0's rendezvous to open: under a launcher rank 0 opens it only when a training
 * stage starts, after its evaluations.
 */
export async function runTrainerWorker(options: { url: string; rank: number; worldSize: number; timeoutMs: number; joinTimeoutMs?: number; ringHost?: string }): Promise<boolean> {
  const { url, rank, worldSize, timeoutMs } = options;
  const ring = Collective.hostRing({ rank, ranks: worldSize, timeoutMs });
  // The address the previous rank reaches this one's ring by: S3_RING_HOST on hosts with several networks, else the
  // address rank 0 sees this rank's join come from.
  const ringHost = options.ringHost ?? process.env.S3_RING_HOST;
  const answer = await joinRendezvous<TrainerGroupSession>(url, { rank, worldSize, ring: { port: ring.port, ...(ringHost === undefined || ringHost === '' ? {} : { host: ringHost }) } }, options.joinTimeoutMs ?? timeoutMs);
  const next = answer.members[(rank + 1) % worldSize];
  if (next === undefined) throw new DistributedError(`the rendezvous at ${url} answered rank ${rank} without rank ${(rank + 1) % worldSize}'s address`);
  const { session } = answer;
  let collective: Collective | null = null;
  if (session.collective === 'none') ring.close();
  else collective = await connectCollective(rank, worldSize, ring, { ...session, collective: session.collective }, next);
  let trainer: Trainer | null = null;
  let rejoin = false;
  const opened = (): Trainer => {
    if (trainer === null) throw new DistributedError(`rank ${rank} has no trainer yet (open comes first)`);
    return trainer;
  };
  try {
    await serveRendezvousCommands(url, rank, async (command: RankCommand, payload?: Buffer) => {
      switch (command.op) {
        case 'open': {
          const { directory, options: trainerOptions } = command.args as TrainerWorkerCommands['open'];
          trainer = Trainer.open(directory, trainerOptions);
          return { device: trainer.device, fingerprint: trainer.parameterFingerprint(), step: trainer.stepCount() };
        }
        case 'accumulate': {
          const share = command.args as Omit<TrainerWorkerCommands['accumulate'], 'micros'>;
          return accumulateShare(opened(), collective, { ...share, micros: payload === undefined ? [] : decodeShare(payload) });
        }
        case 'step':
          return stepRank(opened(), (command.args as TrainerWorkerCommands['step']).fingerprint);
        case 'zeroGrad':
          opened().zeroGrad();
          return null;
        case 'setLr':
          opened().setLr((command.args as TrainerWorkerCommands['setLr']).lr);
          return null;
        case 'end':
          rejoin = (command.args as TrainerWorkerCommands['end']).rejoin;
          return null;
        default:
          throw new DistributedError(`unknown command ${command.op}`);
      }
    });
  } finally {
    collective?.close();
  }
  return rejoin;
}

/** How long a launched rank ≥ 1 retries rank 0's rendezvous, which opens when a training stage starts (after the evaluations before it). */
const LAUNCHED_RANK_JOIN_MS = 24 * 3600 * 1000;

/**
 * A rank ≥ 1 started by a launcher (`swarm train` under torchrun or Slurm): on CUDA it takes its own
 * GPU (set before the addon loads), then serves rank 0's groups, stage after stage, until rank 0
 * dismisses it (trainer-group.ts, dismissLaunchedRanks).
 */
export async function serveLaunchedRank(launcher: RankEnvironment, options: { timeoutMs: number; cuda: boolean }): Promise<void> {
  if (options.cuda) process.env.CUDA_VISIBLE_DEVICES = visibleDeviceForRank(launcher.localRank);
  const url = `http://${launcher.masterAddr}:${launcher.rendezvousPort}`;
  while (await runTrainerWorker({ url, rank: launcher.rank, worldSize: launcher.worldSize, timeoutMs: options.timeoutMs, joinTimeoutMs: LAUNCHED_RANK_JOIN_MS })) {
    // the next stage's group
  }
}
