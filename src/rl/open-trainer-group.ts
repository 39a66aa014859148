// The data-parallel trainer group a training stage of a config runs on (src/distributed/): one rank
// (the trainer alone) unless config.trainerGpus or a torchrun/Slurm launcher says more.
import os from 'node:os';
import type { TrainConfig } from '../config/train-config.js';
import { readRankEnvironment } from '../distributed/rank-environment.js';
import { TrainerGroup } from '../distributed/trainer-group.js';
import { ConfigError } from '../errors.js';
import type { NativeTrainerOptions } from '../native/binding.js';
import { resolveDevice } from '../native/device.js';
import type { Trainer } from '../native/trainer.js';

/**
 * What a stage adds to its trainer options for the ranks it spawns: CPU ranks spawned on this host
 * (config.trainerGpus > 1, no launcher) share its memory, so each keeps activations within an equal
 * share of half of what is free now, rather than each taking half of what it sees free at its own
 * micro-batch (native/train/trainer.h, activation_bytes). Nothing otherwise.
 */
export function localRankTrainerOptions(config: TrainConfig): Pick<NativeTrainerOptions, 'activationBytes'> {
  if (config.trainerGpus <= 1 || readRankEnvironment() !== null || resolveDevice(config.device) !== 'cpu') return {};
  return { activationBytes: Math.max(1, Math.floor(os.freemem() / (2 * config.trainerGpus))) };
}

/**
 * A stage's data-parallel trainer group (SFT, RL): rank 0 is `trainer`, opened on `checkpoint` with
 * `trainerOptions`; under torchrun or Slurm the launcher's
 * world (its other ranks run `swarm train` too and join MASTER_ADDR:MASTER_PORT), else
 * config.trainerGpus ranks, the others spawned here.
 */
export async function openTrainerGroup(config: TrainConfig, trainer: Trainer, checkpoint: string, trainerOptions: NativeTrainerOptions): Promise<TrainerGroup> {
  const launcher = readRankEnvironment();
  if (launcher !== null && config.trainerGpus !== 1 && config.trainerGpus !== launcher.worldSize) {
    throw new ConfigError(`trainerGpus is ${config.trainerGpus} but the ${launcher.launcher} launcher started ${launcher.worldSize} ranks; leave trainerGpus at 1 (the launcher's world is used) or make them agree.`);
  }
  const worldSize = launcher?.worldSize ?? config.trainerGpus;
  if (worldSize === 1) return TrainerGroup.single(trainer);
  const device = trainer.device.startsWith('cuda') ? 'cuda' : 'cpu';
  return TrainerGroup.open({
    trainer,
    checkpoint,
    // Every rank on rank 0's device kind (its own GPU on CUDA), never 'auto' resolved otherwise.
    trainerOptions: { ...trainerOptions, device },
    worldSize,
    device,
    rendezvous: launcher === null ? { host: '127.0.0.1', port: 0, advertise: '127.0.0.1' } : { host: '0.0.0.0', port: launcher.rendezvousPort, advertise: launcher.masterAddr },
    launch: launcher === null ? { kind: 'local' } : { kind: 'launcher' },
    timeoutMs: config.trainerTimeoutSeconds * 1000,
  });
}
