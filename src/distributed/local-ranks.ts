// Ranks 1…R−1 of a data-parallel trainer group started on this machine, one `swarm trainer-worker`
// process each (what `swarm train --trainer-gpus R` does without a launcher). On CUDA each sees
// only its own GPU (CUDA_VISIBLE_DEVICES: the rank-th of this process's visible devices), so its
// device 0 is that GPU. Their output goes to this process's stderr, each line prefixed with the
// rank; a rank that exits before the group ends is reported through onExit with its code and its
// last lines of output. Each rank's stdin is held open by this process: when it ends (even killed),
// the pipe closes and the rank exits instead of waiting out its timeouts.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../native/addon.js';
import { visibleDeviceForRank } from './rank-environment.js';

/** The swarm command line this package runs. */
export const SWARM_CLI = path.join(packageRoot, 'bin', 'swarm.js');

export function spawnLocalRanks(options: { url: string; worldSize: number; timeoutMs: number; device: 'cpu' | 'cuda'; onExit: (rank: number, reason: string) => void }): ChildProcess[] {
  const children: ChildProcess[] = [];
  for (let rank = 1; rank < options.worldSize; rank++) {
    const env = { ...process.env };
    for (const name of ['RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'SLURM_PROCID', 'SLURM_NTASKS']) delete env[name];
    if (options.device === 'cuda') env.CUDA_VISIBLE_DEVICES = visibleDeviceForRank(rank);
    // Its stdin is a lifeline: it closes when this process ends, however it ends, and the rank then exits.
    const child = spawn(process.execPath, [SWARM_CLI, 'trainer-worker', '--rendezvous', options.url, '--rank', String(rank), '--world-size', String(options.worldSize), '--timeout-ms', String(options.timeoutMs), '--lifeline-stdin'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    const relay = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        tail.push(line);
        if (tail.length > 5) tail.shift();
        process.stderr.write(`[trainer rank ${rank}] ${line}\n`);
      }
    };
    child.stdout?.on('data', relay);
    child.stderr?.on('data', relay);
    child.on('exit', (code, signal) => {
      options.onExit(rank, `trainer rank ${rank} exited (${signal === null ? `code ${code}` : `signal ${signal}`})${tail.length > 0 ? `: ${tail.join(' | ')}` : ''}`);
    });
    child.on('error', (error) => options.onExit(rank, `trainer rank ${rank} could not start: ${error.message}`));
    children.push(child);
  }
  return children;
}
