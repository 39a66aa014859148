// Which trainer rank this process is, read from the launcher's environment: torchrun-style
// variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or Slurm's (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID, the first host of SLURM_JOB_NODELIST as the master). Nothing set
// (or a world of one) is a single-process run. A value that is not what it must be is refused
// naming the variable. Also the GPU a rank uses: the LOCAL_RANK-th visible device. Rank 0's
// rendezvous listens on S3_RENDEZVOUS_PORT when set, else on MASTER_PORT, except under torchrun,
// whose agent already holds MASTER_PORT for its own store (TORCHELASTIC_USE_AGENT_STORE): MASTER_PORT + 1.

import { ConfigError } from '../errors.js';

export interface RankEnvironment {
  rank: number;
  worldSize: number;
  localRank: number;
  /** Rank 0's host. */
  masterAddr: string;
  masterPort: number;
  /** The port rank 0 serves s³'s rendezvous on (see the header). */
  rendezvousPort: number;
  /** Which launcher's variables these were. */
  launcher: 'torchrun' | 'slurm';
}

/** The rendezvous port when the launcher names none (torchrun's default). */
export const DEFAULT_MASTER_PORT = 29500;

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, min: number): number {
  const text = env[name];
  const value = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isInteger(value) || value < min) {
    throw new ConfigError(`environment variable ${name} must be an integer ≥ ${min}, got ${JSON.stringify(text)}`);
  }
  return value;
}

function port(env: Env, name: string): number {
  if (env[name] === undefined) return DEFAULT_MASTER_PORT;
  const value = integer(env, name, 1);
  if (value > 65535) throw new ConfigError(`environment variable ${name} must be a port (1–65535), got ${value}`);
  return value;
}

/**
 * The first host of a Slurm node list: "node[03-05,9],gpu1" → "node03". Brackets hold ranges and
 * single numbers, zero padding kept.
 */
export function firstSlurmHost(nodeList: string): string {
  const match = /^([^,[\]]+)(?:\[([^\]]+)\])?/.exec(nodeList.trim());
  if (match === null) throw new ConfigError(`cannot read the Slurm node list ${JSON.stringify(nodeList)}`);
  const prefix = match[1] as string;
  if (match[2] === undefined) return prefix;
  const first = (match[2].split(',')[0] as string).split('-')[0] as string;
  if (!/^\d+$/.test(first)) throw new ConfigError(`cannot read the Slurm node list ${JSON.stringify(nodeList)}`);
  return prefix + first;
}

function rendezvousPort(env: Env, fallback: number): number {
  if (env.S3_RENDEZVOUS_PORT !== undefined) return port(env, 'S3_RENDEZVOUS_PORT');
  if (fallback > 65535) throw new ConfigError(`MASTER_PORT + 1 (${fallback}) is not a port; set S3_RENDEZVOUS_PORT`);
  return fallback;
}

function check(environment: RankEnvironment, names: { rank: string; world: string; local: string }): RankEnvironment {
  if (environment.rank >= environment.worldSize) {
    throw new ConfigError(`environment variable ${names.rank}=${environment.rank} must be below ${names.world}=${environment.worldSize}`);
  }
  if (environment.localRank > environment.rank) {
    throw new ConfigError(`environment variable ${names.local}=${environment.localRank} cannot exceed ${names.rank}=${environment.rank}`);
  }
  return environment;
}

/** This process's rank from the launcher's variables; null when none is set or the world is one process. */
export function readRankEnvironment(env: Env = process.env): RankEnvironment | null {
  if (env.WORLD_SIZE !== undefined || env.RANK !== undefined) {
    const worldSize = integer(env, 'WORLD_SIZE', 1);
    if (worldSize === 1) return null;
    const rank = integer(env, 'RANK', 0);
    const masterAddr = env.MASTER_ADDR;
    if (masterAddr === undefined || masterAddr.trim() === '') throw new ConfigError('environment variable MASTER_ADDR must name rank 0\'s host (WORLD_SIZE is set)');
    const localRank = env.LOCAL_RANK === undefined ? 0 : integer(env, 'LOCAL_RANK', 0);
    const masterPort = port(env, 'MASTER_PORT');
    const agentStore = env.TORCHELASTIC_USE_AGENT_STORE?.toLowerCase() === 'true';
    return check({ rank, worldSize, localRank, masterAddr, masterPort, rendezvousPort: rendezvousPort(env, agentStore ? masterPort + 1 : masterPort), launcher: 'torchrun' }, { rank: 'RANK', world: 'WORLD_SIZE', local: 'LOCAL_RANK' });
  }
  if (env.SLURM_NTASKS !== undefined && env.SLURM_PROCID !== undefined) {
    const worldSize = integer(env, 'SLURM_NTASKS', 1);
    if (worldSize === 1) return null;
    const rank = integer(env, 'SLURM_PROCID', 0);
    const localRank = env.SLURM_LOCALID === undefined ? 0 : integer(env, 'SLURM_LOCALID', 0);
    const nodeList = env.SLURM_JOB_NODELIST ?? env.SLURM_NODELIST;
    const masterAddr = env.MASTER_ADDR ?? (nodeList === undefined ? undefined : firstSlurmHost(nodeList));
    if (masterAddr === undefined) throw new ConfigError('environment variables SLURM_JOB_NODELIST or MASTER_ADDR must name rank 0\'s host (SLURM_NTASKS is set)');
    const masterPort = port(env, 'MASTER_PORT');
    return check({ rank, worldSize, localRank, masterAddr, masterPort, rendezvousPort: rendezvousPort(env, masterPort), launcher: 'slurm' }, { rank: 'SLURM_PROCID', world: 'SLURM_NTASKS', local: 'SLURM_LOCALID' });
  }
  return null;
}

/**
 * The CUDA_VISIBLE_DEVICES a rank's process should see, so that its device 0 is its own GPU: the
 * localRank-th entry of the launcher's list, the one entry when the launcher bound the task to a
 * single GPU (Slurm's --gpus-per-task=1), or the GPU numbered localRank when there is no list.
 */
export function visibleDeviceForRank(localRank: number, env: Env = process.env): string {
  const visible = env.CUDA_VISIBLE_DEVICES;
  if (visible === undefined || visible.trim() === '') return String(localRank);
  const devices = visible.split(',').map((d) => d.trim()).filter((d) => d !== '');
  if (devices.length === 1) return devices[0] as string;
  const device = devices[localRank];
  if (device === undefined) {
    throw new ConfigError(`local rank ${localRank} has no GPU: CUDA_VISIBLE_DEVICES=${visible} lists ${devices.length}`);
  }
  return device;
}
