// `swarm bench forward|decode|train|harness [--json]`: throughput figures measured side by side with the
// machine's own limits (docs/benchmarks.md records them with the commands that made them).
import type { Command } from 'commander';
import { benchDecode, benchForward } from '../native/model-bench.js';
import { benchTrain } from '../native/train-bench.js';
import { benchHarness } from '../harness/index.js';
import { loadBuiltinTokenizer } from '../model/s3-mini-tokenizer.js';
import { Tokenizer } from '../model/tokenizer/index.js';
import { parseIntegerFlag, parseIntegerListFlag } from './options.js';

const print = (json: boolean | undefined, value: unknown, text: () => string) =>
  process.stdout.write((json ? JSON.stringify(value, null, 2) : text()) + '\n');

/** Registers `swarm bench forward`, `decode`, `train` and `harness`. */
export function registerBench(program: Command): void {
  const bench = program.command('bench').description('measure throughput (figures side by side with the machine limits)');

  bench
    .command('forward')
    .description('prefill tokens/s of the Qwen3 forward pass, as a fraction of the FMA peak')
    .option('--model <dir>', 'a Qwen3 checkpoint folder')
    .option('--shape <name>', 'random weights of a shape: tiny | small | s3-mini | qwen3-0.6b | qwen3-1.7b', 'qwen3-0.6b')
    .option('--batches <list>', 'sequences×tokens shapes, e.g. 1x512,4x512', '1x512,4x512')
    .option('--repetitions <n>', 'timed repetitions (median reported)', '3')
    .option('--json', 'print JSON')
    .action((options: { model?: string; shape: string; batches: string; repetitions: string; json?: boolean }) => {
      const shapes = options.batches.split(',').map((part) => {
        const [sequences, tokens] = part.split('x');
        return [parseIntegerFlag('--batches', sequences, 1), parseIntegerFlag('--batches', tokens ?? '', 1)] as [number, number];
      });
      const report = benchForward({ model: options.model, shape: options.shape, shapes, repetitions: parseIntegerFlag('--repetitions', options.repetitions, 1) });
      print(options.json, report, () =>
        [
          `model ${report.model}; machine: ${report.limits.fmaGflops.toFixed(0)} GFLOP/s FMA peak, ${report.limits.readGBytesPerSecond.toFixed(1)} GB/s read (${report.limits.threads} threads, ${report.limits.simd})`,
          ...report.prefill.map((f) => `prefill ${f.sequences}×${f.tokens}: ${f.tokensPerSecond.toFixed(1)} tokens/s, ${f.gflops.toFixed(0)} GFLOP/s = ${(100 * f.fractionOfFmaPeak).toFixed(0)}% of peak (median of ${options.repetitions}, ${f.medianSeconds.toFixed(2)} s)`),
        ].join('\n'),
      );
    });

  bench
    .command('decode')
    .description('decode tokens/s at several concurrencies, as a fraction of the read bandwidth')
    .option('--model <dir>', 'a Qwen3 checkpoint folder')
    .option('--shape <name>', 'random weights of a shape', 'qwen3-0.6b')
    .option('--sequences <list>', 'concurrent sequences', '1,8,32,64')
    .option('--context <n>', 'cached positions per sequence', '1024')
    .option('--repetitions <n>', 'timed repetitions (median reported)', '5')
    .option('--json', 'print JSON')
    .action((options: { model?: string; shape: string; sequences: string; context: string; repetitions: string; json?: boolean }) => {
      const report = benchDecode({
        model: options.model,
        shape: options.shape,
        sequences: parseIntegerListFlag('--sequences', options.sequences, 1),
        context: parseIntegerFlag('--context', options.context, 1),
        repetitions: parseIntegerFlag('--repetitions', options.repetitions, 1),
      });
      print(options.json, report, () =>
        [
          `model ${report.model}; machine: ${report.limits.readGBytesPerSecond.toFixed(1)} GB/s read, ${report.limits.fmaGflops.toFixed(0)} GFLOP/s FMA (${report.limits.threads} threads)`,
          ...report.decode.map((f) =>
            f.skipped
              ? `decode ×${f.sequences} @${f.context}: skipped (${f.skipped})`
              : `decode ×${f.sequences} @${f.context}: ${f.tokensPerSecond.toFixed(1)} tokens/s (${(1000 * f.medianSeconds).toFixed(0)} ms/step), ${(100 * f.fractionOfReadBandwidth).toFixed(0)}% of read bandwidth` +
                (f.speedupOverOneSequence === null ? '' : `, ${f.speedupOverOneSequence.toFixed(1)}× one sequence`),
          ),
        ].join('\n'),
      );
    });

  bench
    .command('train')
    .description('tokens/s of a training step (forward + backward + AdamW, SFT loss, one packed sequence), as a fraction of the FMA peak')
    .option('--model <dir>', 'a Qwen3 checkpoint folder')
    .option('--shape <name>', 'random weights of a shape: tiny | small | s3-mini | qwen3-0.6b | qwen3-1.7b', 'small')
    .option('--seq <n>', 'tokens in the packed sequence', '2048')
    .option('--repetitions <n>', 'timed steps (median reported)', '3')
    .option('--no-warm-up', 'skip the untimed first step (a 0.6B step takes minutes)')
    .option('--json', 'print JSON')
    .action((options: { model?: string; shape: string; seq: string; repetitions: string; warmUp: boolean; json?: boolean }) => {
      const report = benchTrain({
        model: options.model,
        shape: options.shape,
        seq: parseIntegerFlag('--seq', options.seq, 2),
        repetitions: parseIntegerFlag('--repetitions', options.repetitions, 1),
        warmUp: options.warmUp,
      });
      const f = report.train;
      print(options.json, report, () =>
        [
          `model ${report.model}; machine: ${report.limits.fmaGflops.toFixed(0)} GFLOP/s FMA peak (${report.limits.threads} threads, ${report.limits.simd})`,
          `train ${f.tokens} tokens: ${f.tokensPerSecond.toFixed(1)} tokens/s (step ${f.medianSeconds.toFixed(2)} s: forward+backward ${f.forwardBackwardSeconds.toFixed(2)} s, AdamW ${f.optimizerSeconds.toFixed(3)} s), ` +
            `${f.gflops.toFixed(0)} GFLOP/s = ${(100 * f.fractionOfFmaPeak).toFixed(0)}% of peak, peak memory ${f.peakMemoryGiB.toFixed(2)} GiB`,
          `FLOPs per token: ${report.flopsFormula} = ${(f.flopsPerToken / 1e9).toFixed(3)} GFLOP`,
        ].join('\n'),
      );
    });

  bench
    .command('harness')
    .description('agent events/s of the harness: concurrent teams of scripted explorers')
    .option('--teams <n>', 'concurrent teams', '196')
    .option('--n <n>', 'agents per team', '4')
    .option('--depth <d>', 'exploration tree depth', '3')
    .option('--tokenizer <file>', 'tokenizer.json the scripted agents write with (default: the built-in s3-mini)')
    .option('--json', 'print JSON')
    .action(async (options: { teams: string; n: string; depth: string; tokenizer?: string; json?: boolean }) => {
      const tokenizer = options.tokenizer ? Tokenizer.fromFile(options.tokenizer) : loadBuiltinTokenizer();
      const result = await benchHarness({
        tokenizer,
        teams: parseIntegerFlag('--teams', options.teams, 1),
        n: parseIntegerFlag('--n', options.n, 1),
        depth: parseIntegerFlag('--depth', options.depth, 1),
      });
      print(options.json, result, () =>
        `${result.teams} teams × ${options.n} agents: ${result.events} events in ${(result.wallMs / 1000).toFixed(2)} s = ` +
        `${Math.round(result.eventsPerSecond)} agent events/s (harness share ${(100 * result.harnessShare).toFixed(0)}%, success ${(100 * result.successRate).toFixed(0)}%)`,
      );
    });
}
