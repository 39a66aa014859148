// `swarm trainer-worker` (hidden): one data-parallel trainer rank ≥ 1, started by `swarm train
// --trainer-gpus N` on the same machine (distributed/local-ranks.ts). It joins rank 0's rendezvous
// and takes its commands until rank 0 ends them (distributed/trainer-worker.ts); a failure exits 1
// with the reason on stderr, which rank 0 reports with the rank's number.
import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import { runTrainerWorker } from '../distributed/trainer-worker.js';

function integer(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer ≥ ${min}, got ${text}`);
  return value;
}

export function registerTrainerWorker(program: Command): void {
  program
    .command('trainer-worker', { hidden: true })
    .description('one data-parallel trainer rank (started by swarm train --trainer-gpus)')
    .requiredOption('--rendezvous <url>', "rank 0's rendezvous, http://HOST:PORT")
    .requiredOption('--rank <rank>', 'this rank (≥ 1)')
    .requiredOption('--world-size <n>', 'ranks in the group')
    .option('--timeout-ms <ms>', 'every wait’s deadline', '600000')
    .option('--lifeline-stdin', 'exit as soon as stdin closes (rank 0 holds it open while it runs)')
    .action(async (options: { rendezvous: string; rank: string; worldSize: string; timeoutMs: string; lifelineStdin?: boolean }) => {
      const lifelineLost = (): never => {
        process.stderr.write(`swarm: trainer rank ${options.rank}: rank 0 stopped (its lifeline closed); exiting\n`);
        process.exit(1);
      };
      if (options.lifelineStdin === true) {
        process.stdin.resume();
        process.stdin.on('close', lifelineLost);
      }
      try {
        await runTrainerWorker({
          url: options.rendezvous,
          rank: integer('--rank', options.rank, 1),
          worldSize: integer('--world-size', options.worldSize, 2),
          timeoutMs: integer('--timeout-ms', options.timeoutMs, 1),
        });
      } finally {
        // Done (rank 0 ended the group): the lifeline no longer holds the process.
        process.stdin.off('close', lifelineLost);
        process.stdin.destroy();
      }
    });
}
