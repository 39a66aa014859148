#!/usr/bin/env node
// A/B timing of computing a shared prompt prefix once (docs/benchmarks.md, session 8), on a real
// checkpoint, alternating the two settings round by round so machine noise hits both alike:
//   trainer: one RL update's worth of policy-gradient micro-batches (64 agent histories of 700
//            tokens whose first 330 are a common system turn, 12 per micro-batch as the RL loop
//            packs them), sharedPrefixMinTokens 0 (every sequence whole) vs 16 (the default);
//   engine:  64 sequences opening with the same 330-token turn plus 40 tokens of their own, prefilled
//            and then decoded 64 tokens each, prefixCaching false vs true.
// Reports the median seconds of each and the paired ratio. Needs `npm run build` (reads dist/).
//   node bench/shared_prefix_ab.mjs RUN/checkpoints/sft [--rounds 5]
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { Trainer } = await import(path.join(root, 'dist/native/trainer.js'));
const { InferenceEngine } = await import(path.join(root, 'dist/native/engine.js'));

const checkpoint = process.argv[2];
if (!checkpoint) throw new Error('usage: node bench/shared_prefix_ab.mjs CHECKPOINT_DIR [--rounds N]');
const roundsAt = process.argv.indexOf('--rounds');
const rounds = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 5;
const PREFIX = 330;
const token = (i, salt) => (i * 7919 + salt * 104729 + 17) % 1600;
const common = Array.from({ length: PREFIX }, (_, i) => token(i, 0));

function histories() {
  return Array.from({ length: 64 }, (_, a) => {
    const tokens = [...common, ...Array.from({ length: 370 }, (_, i) => token(i, a + 1))];
    // Loss on the agent's own turns only (every third token after the first 40 of its own), ±advantage.
    const coef = tokens.slice(1).map((_, t) => (t >= PREFIX + 40 && t % 3 === 0 ? (a % 2 ? -1 : 1) / 4000 : 0));
    return { tokens, coef };
  });
}

async function trainerSeconds(minTokens, sequences) {
  const trainer = Trainer.open(checkpoint, { sharedPrefixMinTokens: minTokens });
  const started = performance.now();
  let shared = 0;
  for (let i = 0; i < sequences.length; i += 12) shared += (await trainer.accumulate('sft', sequences.slice(i, i + 12))).sharedPrefixTokens;
  trainer.step();
  return { seconds: (performance.now() - started) / 1000, shared };
}

async function engineSeconds(prefixCaching) {
  const engine = InferenceEngine.load(checkpoint, { prefixCaching });
  const sequences = Array.from({ length: 64 }, (_, a) => {
    const sequence = engine.openSequence();
    engine.append(sequence, [...common, ...Array.from({ length: 40 }, (_, i) => token(i, a + 1))]);
    return sequence;
  });
  const started = performance.now();
  await Promise.all(sequences.map((s, a) => engine.generate(s, { maxNew: 64, stopTokenIds: [], temperature: 1, seed: a })));
  const seconds = (performance.now() - started) / 1000;
  const hits = engine.stats().prefixCacheHitTokens;
  engine.close();
  return { seconds, hits };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sequences = histories();
const result = { trainer: { whole: [], shared: [], sharedRows: 0 }, engine: { uncached: [], cached: [], hitTokens: 0 } };
for (let r = 0; r < rounds; r += 1) {
  result.trainer.whole.push((await trainerSeconds(0, sequences)).seconds);
  const shared = await trainerSeconds(16, sequences);
  result.trainer.shared.push(shared.seconds);
  result.trainer.sharedRows = shared.shared;
  result.engine.uncached.push((await engineSeconds(false)).seconds);
  const cached = await engineSeconds(true);
  result.engine.cached.push(cached.seconds);
  result.engine.hitTokens = cached.hits;
}
const paired = (a, b) => median(a.map((x, i) => x / b[i]));
console.log(
  JSON.stringify(
    {
      rounds,
      trainer: { wholeMedianSeconds: median(result.trainer.whole), sharedMedianSeconds: median(result.trainer.shared), pairedSpeedup: paired(result.trainer.whole, result.trainer.shared), sharedRows: result.trainer.sharedRows, rows: sequences.length * 700 },
      engine: { uncachedMedianSeconds: median(result.engine.uncached), cachedMedianSeconds: median(result.engine.cached), pairedSpeedup: paired(result.engine.uncached, result.engine.cached), prefixCacheHitTokens: result.engine.hitTokens },
    },
    null,
    2,
  ),
);
