// The benchmark behind `swarm bench weights`: how long one weights version takes to reach an
// inference engine by the two routes `swarm train --inference-servers` offers (docs/serve.md): a
// folder (Trainer.saveModel into a fresh folder, as --weight-transfer folder writes each version, then
// Engine.loadWeights from it) and a TCP weight link on loopback (a WeightsSnapshot of the trainer,
// sent to the engine's end of a two-rank host ring). Each is timed until the engine has scored a short
// sequence with the new weights (a loaded folder is memory-mapped, so its bytes are read at that first
// use). After one untimed round of each, both in one process, alternated repetition by repetition so the machine's drift reaches both;
// medians, bytes, and whether the engine scores the same after either (it must: the same weights arrive).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Collective } from '../native/collective.js';
import { InferenceEngine } from '../native/engine.js';
import { benchCheckpointDirectory } from '../native/random-checkpoint.js';
import { Trainer } from '../native/trainer.js';
import { WeightsSnapshot } from '../native/weights-snapshot.js';
import { median } from './median.js';

export interface WeightRouteFigures {
  readonly seconds: number[];
  readonly medianSeconds: number;
  /** Bytes the route moves per version: the folder's files, or the link's tensor bytes. */
  readonly bytes: number;
  readonly gbytesPerSecond: number;
}

/** `swarm bench weights --json`. */
export interface WeightsBenchReport {
  readonly model: string;
  readonly trainer: string;
  readonly folder: WeightRouteFigures & { readonly directory: string };
  readonly link: WeightRouteFigures;
  /** folder median / link median: how many times faster the link is. */
  readonly linkSpeedup: number;
  /** The engine scored a sequence bit for bit the same after each route. */
  readonly sameScores: boolean;
}

function folderBytes(directory: string): number {
  return fs.readdirSync(directory).reduce((total, name) => total + fs.statSync(path.join(directory, name)).size, 0);
}

function figures(seconds: number[], bytes: number): WeightRouteFigures {
  const m = median(seconds);
  return { seconds, medianSeconds: m, bytes, gbytesPerSecond: bytes / m / 1e9 };
}

export async function benchWeights(options: { model?: string; shape?: string; repetitions: number; threads?: number }): Promise<WeightsBenchReport> {
  const directory = options.model ?? benchCheckpointDirectory(options.shape ?? 'qwen3-0.6b');
  const label = options.model ?? `${options.shape ?? 'qwen3-0.6b'} (random bf16 weights)`;
  const trainer = Trainer.open(directory, { ...(options.threads === undefined ? {} : { threads: options.threads }) });
  const engine = InferenceEngine.load(directory, { numBlocks: 16, deterministic: false });
  const sender = Collective.hostRing({ rank: 0, ranks: 2, timeoutMs: 600_000, bindHost: '127.0.0.1' });
  const receiver = Collective.hostRing({ rank: 1, ranks: 2, timeoutMs: 600_000, bindHost: '127.0.0.1' });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 's3-bench-weights-'));
  const tokens = Array.from({ length: 32 }, (_, i) => (i * 7919 + 13) % Math.min(engine.stats().vocabSize, 1000));
  try {
    await Promise.all([sender.connect({ host: '127.0.0.1', port: receiver.port }), receiver.connect({ host: '127.0.0.1', port: sender.port })]);
    const folderSeconds: number[] = [];
    const linkSeconds: number[] = [];
    let folderSize = 0;
    let linkBytes = 0;
    let sameScores = true;
    // Round 0 is a warm-up (first touches of the trainer's and engine's memory), not timed.
    for (let r = 0; r <= options.repetitions; r += 1) {
      const timed = r > 0;
      const folder = path.join(scratch, `v${r}`);
      let started = performance.now();
      trainer.saveModel(folder);
      engine.loadWeights(folder);
      const viaFolder = await engine.score(tokens);
      if (timed) folderSeconds.push((performance.now() - started) / 1000);
      folderSize = folderBytes(folder);
      fs.rmSync(folder, { recursive: true, force: true });

      started = performance.now();
      const snapshot = WeightsSnapshot.ofTrainer(trainer);
      const [sent] = await Promise.all([snapshot.send(sender), engine.receiveWeights(receiver)]);
      const viaLink = await engine.score(tokens);
      if (timed) linkSeconds.push((performance.now() - started) / 1000);
      snapshot.release();
      linkBytes = sent.bytes;
      sameScores &&= Buffer.from(viaFolder.buffer).equals(Buffer.from(viaLink.buffer));
    }
    const folder = figures(folderSeconds, folderSize);
    const link = figures(linkSeconds, linkBytes);
    return { model: label, trainer: trainer.device, folder: { ...folder, directory: scratch }, link, linkSpeedup: folder.medianSeconds / link.medianSeconds, sameScores };
  } finally {
    sender.close();
    receiver.close();
    engine.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
