// `swarm serve` started the way a user starts it: a child process on a free loopback port, its start
// line (--json) read for the URL.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');

/** A running server. */
export interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  readonly start: Record<string, unknown>;
  readonly exited: Promise<number | null>;
}

/** Starts `swarm serve --model MODEL --port 0 --json` with extra flags; resolves once it listens. */
export async function serve(model: string, extra: string[] = []): Promise<Served> {
  const child = spawn(process.execPath, [swarm, 'serve', '--model', model, '--port', '0', '--json', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = readline.createInterface({ input: child.stdout! });
  const first = await Promise.race([
    new Promise<string>((resolve) => lines.once('line', resolve)),
    exited.then((code) => {
      throw new Error(`swarm serve exited ${code} before listening: ${stderr}`);
    }),
  ]);
  const start = JSON.parse(first) as Record<string, unknown>;
  return { child, url: String(start.url), start, exited };
}

