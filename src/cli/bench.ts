// `swarm bench forward|decode|train|harness|engine [--json]`: throughput figures measured side by side with the
// machine's own limits (docs/benchmarks.md records them with the commands that made them).
import type { Command } from 'commander';
import { benchDecode, benchDeviceDecode, benchDeviceForward, benchForward, usesRunnerBench } from '../bench/model-bench.js';
import { DEVICE_CHOICES, resolveDevice } from '../native/device.js';
import { benchTrain } from '../bench/train-bench.js';
import { MATMUL_PRECISIONS, OPTIMIZER_STATE_DTYPES } from '../native/trainer.js';
import { benchEngine, soakEngine } from '../bench/engine-bench.js';
import { benchLockstep, type LockstepModeFigures } from '../bench/lockstep-bench.js';
import { KV_CACHE_DTYPES } from '../native/engine.js';
import { benchHarness } from '../bench/harness-bench.js';
import { benchAllReduce } from '../bench/allreduce-bench.js';
import { benchWeights, type WeightRouteFigures } from '../bench/weights-bench.js';
import { benchServe, type ServeModeFigures } from '../bench/serve-bench.js';
import { loadBuiltinTokenizer } from '../model/s3-mini-tokenizer.js';
import { Tokenizer } from '../model/tokenizer/index.js';
import { addDeviceFlags, KV_DTYPE_HELP, parseChoiceFlag, parseDeviceFlags, parseIntegerFlag, parseIntegerListFlag } from './options.js';
import { ConfigError } from '../errors.js';

const print = (json: boolean | undefined, value: unknown, text: () => string) =>
  process.stdout.write((json ? JSON.stringify(value, null, 2) : text()) + '\n');

/** Registers `swarm bench forward`, `decode`, `train`, `harness` and `engine`. */
export function registerBench(program: Command): void {
  const bench = program.command('bench').description('measure throughput (figures side by side with the machine limits)');

  addDeviceFlags(
    bench
      .command('forward')
      .description('prefill tokens/s of the Qwen3 forward pass (CPU: as a fraction of the FMA peak; --device cuda: through the CUDA runner)')
      .option('--model <dir>', 'a Qwen3 checkpoint folder')
      .option('--shape <name>', 'random weights of a shape: tiny | small | s3-mini | qwen3-0.6b | qwen3-1.7b', 'qwen3-0.6b')
      .option('--batches <list>', 'sequences×tokens shapes, e.g. 1x512,4x512', '1x512,4x512')
      .option('--step-tokens <n>', 'with --device cuda or --weights fp8: tokens per runner step (sequences of a shape are prefilled this many at a time)', '8192')
      .option('--repetitions <n>', 'timed repetitions (median reported)', '3')
      .option('--kv-dtype <type>', `${KV_DTYPE_HELP} (the CPU forward pass; the runner path of --device cuda or --weights fp8 keeps f32)`, 'f32')
      .option('--json', 'print JSON'),
  ).action((options: { model?: string; shape: string; batches: string; stepTokens: string; repetitions: string; kvDtype: string; json?: boolean; device: string; weights: string }) => {
      const shapes = options.batches.split(',').map((part) => {
        const [sequences, tokens] = part.split('x');
        return [parseIntegerFlag('--batches', sequences, 1), parseIntegerFlag('--batches', tokens ?? '', 1)] as [number, number];
      });
      const repetitions = parseIntegerFlag('--repetitions', options.repetitions, 1);
      const kvCacheDtype = parseChoiceFlag('--kv-dtype', options.kvDtype, KV_CACHE_DTYPES);
      const device = parseDeviceFlags(options);
      const resolved = resolveDevice(device.device);
      if (usesRunnerBench(device, resolved)) {
        if (kvCacheDtype !== 'f32') {
          throw new ConfigError(`--kv-dtype ${kvCacheDtype}: bench forward sets the KV cache type on the CPU forward pass only, not through the runner of --device cuda or --weights fp8`);
        }
        const report = benchDeviceForward({ model: options.model, shape: options.shape, device, shapes, stepTokens: parseIntegerFlag('--step-tokens', options.stepTokens, 1), repetitions });
        print(options.json, report, () =>
          [
            `model ${report.model} on ${report.runner.device} (${report.runner.gemm}; ${report.runner.attention}; graphs ${report.runner.graphs})`,
            ...report.prefill.map(
              (f) =>
                `prefill ${f.sequences}×${f.tokens}: ${f.tokensPerSecond.toFixed(0)} tokens/s, ${f.tflops.toFixed(2)} TFLOP/s` +
                (f.mfu === null ? '' : ` = MFU ${f.mfu.toFixed(3)} of ${f.peakProduct}'s ${f.peakBf16Tflops} TFLOP/s BF16`) +
                ` (median of ${repetitions}, ${f.medianSeconds.toFixed(3)} s, ${f.stepTokens} tokens per step)`,
            ),
          ].join('\n'),
        );
        return;
      }
      const report = benchForward({ model: options.model, shape: options.shape, shapes, repetitions, kvCacheDtype });
      print(options.json, report, () =>
        [
          `model ${report.model}, ${report.kvCacheDtype} KV cache; machine: ${report.limits.fmaGflops.toFixed(0)} GFLOP/s FMA peak${report.limits.bf16DotGflops > 0 ? `, ${report.limits.bf16DotGflops.toFixed(0)} GFLOP/s BF16 dot-product peak` : ''}${report.limits.amxGflops > 0 ? `, ${report.limits.amxGflops.toFixed(0)} GFLOP/s AMX tile peak (${report.limits.amxLoadedGflops.toFixed(0)} with tile loads from L1)` : ''}, ${report.limits.readGBytesPerSecond.toFixed(1)} GB/s read (${report.limits.threads} threads, ${report.limits.simd})`,
          ...report.prefill.map(
            (f) =>
              `prefill ${f.sequences}×${f.tokens}: ${f.tokensPerSecond.toFixed(1)} tokens/s, ${f.gflops.toFixed(0)} GFLOP/s = ${(100 * f.fractionOfFmaPeak).toFixed(0)}% of FMA peak` +
              `${report.limits.bf16DotGflops > 0 ? `, ${(100 * f.fractionOfLevelPeak).toFixed(0)}% of ${report.limits.amxGflops > 0 ? 'AMX' : 'BF16'} peak` : ''} (median of ${options.repetitions}, ${f.medianSeconds.toFixed(2)} s)`,
          ),
        ].join('\n'),
      );
    });

  addDeviceFlags(
    bench
      .command('decode')
      .description('decode tokens/s at several concurrencies (CPU: as a fraction of the read bandwidth; --device cuda: of the copy-bandwidth roofline)')
      .option('--model <dir>', 'a Qwen3 checkpoint folder')
      .option('--shape <name>', 'random weights of a shape', 'qwen3-0.6b')
      .option('--sequences <list>', 'concurrent sequences', '1,8,32,64')
      .option('--context <n>', 'cached positions per sequence', '1024')
      .option('--repetitions <n>', 'timed repetitions (median reported)', '5')
      .option('--kv-dtype <type>', KV_DTYPE_HELP, 'f32')
      .option('--json', 'print JSON'),
  ).action((options: { model?: string; shape: string; sequences: string; context: string; repetitions: string; kvDtype: string; json?: boolean; device: string; weights: string }) => {
      const kvCacheDtype = parseChoiceFlag('--kv-dtype', options.kvDtype, KV_CACHE_DTYPES);
      const sequences = parseIntegerListFlag('--sequences', options.sequences, 1);
      const context = parseIntegerFlag('--context', options.context, 1);
      const repetitions = parseIntegerFlag('--repetitions', options.repetitions, 1);
      const device = parseDeviceFlags(options);
      const resolved = resolveDevice(device.device);
      if (usesRunnerBench(device, resolved)) {
        const report = benchDeviceDecode({ model: options.model, shape: options.shape, device, resolved, sequences, context, repetitions, kvCacheDtype });
        print(options.json, report, () =>
          [
            `model ${report.model} on ${report.runner.device} (${report.runner.gemm}; ${report.runner.attention}; graphs ${report.runner.graphs}), ${report.kvCacheDtype} KV cache; bandwidth ${report.copyBandwidthGBytesPerSecond.toFixed(0)} GB/s`,
            ...report.decode.map((f) => `decode ×${f.sequences} @${f.context}: ${f.tokensPerSecond.toFixed(1)} tokens/s (${(1000 * f.medianSeconds).toFixed(2)} ms/step), ${(100 * f.fractionOfRoofline).toFixed(0)}% of the roofline`),
          ].join('\n'),
        );
        return;
      }
      const report = benchDecode({ kvCacheDtype, model: options.model, shape: options.shape, sequences, context, repetitions });
      print(options.json, report, () =>
        [
          `model ${report.model}, ${report.kvCacheDtype} KV cache; machine: ${report.limits.readGBytesPerSecond.toFixed(1)} GB/s read, ${report.limits.fmaGflops.toFixed(0)} GFLOP/s FMA (${report.limits.threads} threads)`,
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
    .description('tokens/s of a training step (forward + backward + AdamW, SFT loss, packed sequences), on the CPU as a fraction of the FMA peak, on a known GPU with BF16 matmuls as MFU against its datasheet peak')
    .option('--model <dir>', 'a Qwen3 checkpoint folder')
    .option('--shape <name>', 'random weights of a shape: tiny | small | s3-mini | qwen3-0.6b | qwen3-1.7b', 'small')
    .option('--seq <n>', 'tokens per sequence', '2048')
    .option('--sequences <n>', 'sequences packed into each micro-batch (a micro-batch trains seq × sequences tokens)', '1')
    .option('--micro-batches <n>', 'micro-batches per step, their gradients accumulated before one AdamW step (a step trains seq × sequences × micro-batches tokens)', '1')
    .option('--device <device>', 'where the trainer runs: auto (CUDA when a usable GPU exists, else the CPU) | cpu | cuda', 'auto')
    .option('--repetitions <n>', 'timed steps (median reported)', '3')
    .option('--no-warm-up', 'skip the untimed first step (a 0.6B step takes minutes)')
    .option('--optimizer-state <dtype>', 'AdamW moments: f32 | bf16 (stochastically rounded, half the memory)', 'f32')
    .option('--precision <list>', 'trainer matmuls: f32 | bf16 (BF16 operands, f32 sums) | f32,bf16 (both, side by side in one run)', 'f32')
    .option('--activation-mib <n>', 'MiB the forward may keep activations in for the backward, beyond which each layer is recomputed (0: half the free memory)', '0')
    .option('--json', 'print JSON')
    .action((options: { model?: string; shape: string; seq: string; sequences: string; microBatches: string; device: string; repetitions: string; warmUp: boolean; optimizerState: string; precision: string; activationMib: string; json?: boolean }) => {
      const report = benchTrain({
        model: options.model,
        shape: options.shape,
        seq: parseIntegerFlag('--seq', options.seq, 2),
        sequences: parseIntegerFlag('--sequences', options.sequences, 1),
        microBatches: parseIntegerFlag('--micro-batches', options.microBatches, 1),
        device: parseChoiceFlag('--device', options.device, DEVICE_CHOICES),
        repetitions: parseIntegerFlag('--repetitions', options.repetitions, 1),
        warmUp: options.warmUp,
        optimizerStateDtype: parseChoiceFlag('--optimizer-state', options.optimizerState, OPTIMIZER_STATE_DTYPES),
        precisions: [...new Set(options.precision.split(','))].map((p) => parseChoiceFlag('--precision', p, MATMUL_PRECISIONS)),
        activationBytes: parseIntegerFlag('--activation-mib', options.activationMib, 0) * 2 ** 20,
      });
      const peaks = `${report.limits.fmaGflops.toFixed(0)} GFLOP/s FMA peak` + (report.limits.bf16DotGflops > 0 ? `, ${report.limits.bf16DotGflops.toFixed(0)} GFLOP/s BF16 dot peak` : '') +
        (report.limits.amxGflops > 0 ? `, ${report.limits.amxGflops.toFixed(0)} GFLOP/s AMX tile peak (${report.limits.amxLoadedGflops.toFixed(0)} with tile loads from L1)` : '');
      print(options.json, report, () =>
        [
          // The measured peaks are the CPU's: a device run's line says so (its fractions of peak are null).
          `model ${report.model}, ${report.optimizerStateDtype} AdamW moments; ${report.runs.every(({ train }) => train.device.startsWith('cpu')) ? 'machine' : 'host CPU (not the trainer\'s device)'}: ${peaks} (${report.limits.threads} threads, ${report.limits.simd})`,
          ...report.runs.map(({ matmulPrecision, train: f }) =>
            `train ${f.tokens} tokens (${f.microBatches > 1 ? `${f.microBatches} micro-batches of ` : ''}${f.sequences} × ${f.tokens / f.microBatches / f.sequences}) on ${f.device}, ${matmulPrecision} matmuls: ${f.tokensPerSecond.toFixed(1)} tokens/s (step ${f.medianSeconds.toFixed(2)} s: forward+backward ${f.forwardBackwardSeconds.toFixed(2)} s, AdamW ${f.optimizerSeconds.toFixed(3)} s), ` +
              `${f.gflops.toFixed(0)} GFLOP/s` + (f.fractionOfFmaPeak === null ? '' : ` = ${(100 * f.fractionOfFmaPeak).toFixed(0)}% of the FMA peak`) +
              (f.mfu === null ? '' : ` = MFU ${(100 * f.mfu).toFixed(1)}% of the ${f.peakProduct}'s datasheet BF16 peak (${f.peakBf16Tflops} TFLOP/s)`) +
              (f.fractionOfBf16DotPeak === null || matmulPrecision !== 'bf16' ? '' : ` (${(100 * f.fractionOfBf16DotPeak).toFixed(0)}% of the BF16 dot peak${f.fractionOfAmxPeak === null ? '' : `, ${(100 * f.fractionOfAmxPeak).toFixed(0)}% of the AMX tile peak`})`) +
              `, peak memory ${f.peakMemoryGiB.toFixed(2)} GiB (${f.activationsKept ? 'activations kept' : 'each layer recomputed'} for the backward), loss ${f.loss.toFixed(5)}`,
          ),
          ...(report.bf16OverF32 === null ? [] : [`bf16 / f32: ${report.bf16OverF32.toFixed(2)}× tokens/s`]),
          `FLOPs per token: ${report.flopsFormula} = ${(report.train.flopsPerToken / 1e9).toFixed(3)} GFLOP`,
        ].join('\n'),
      );
    });

  bench
    .command('allreduce')
    .description("the data-parallel trainer's host-ring all-reduce (ranks as threads on loopback) beside the machine's memory bandwidth (docs/cluster.md)")
    .option('--ranks <list>', 'group sizes, comma-separated', '2,4')
    .option('--mib <n>', 'MiB of f32 gradients each rank sums', '64')
    .option('--repetitions <n>', 'timed all-reduces per group size (after one warm-up)', '5')
    .option('--json', 'print JSON')
    .action((options: { ranks: string; mib: string; repetitions: string; json?: boolean }) => {
      const report = benchAllReduce({
        ranks: parseIntegerListFlag('--ranks', options.ranks, 2),
        floats: (parseIntegerFlag('--mib', options.mib, 1) * 1024 * 1024) / 4,
        repetitions: parseIntegerFlag('--repetitions', options.repetitions, 1),
      });
      print(options.json, report, () =>
        [
          `memory read bandwidth ${report.memoryReadGbytesPerSecond.toFixed(1)} GB/s (${report.cpus} threads)`,
          ...report.rings.map(
            (r) =>
              `${r.ranks} ranks × ${((r.floats * 4) / 2 ** 20).toFixed(0)} MiB: median ${(r.medianSeconds * 1000).toFixed(1)} ms, bus ${r.busGbytesPerSecond.toFixed(2)} GB/s ` +
              `(${((100 * r.busGbytesPerSecond) / report.memoryReadGbytesPerSecond).toFixed(1)}% of memory read), algorithm ${r.algorithmGbytesPerSecond.toFixed(2)} GB/s; the same bits on every rank: ${r.sameOnEveryRank ? 'yes' : 'NO'}`,
          ),
        ].join('\n'),
      );
      if (report.rings.some((r) => !r.sameOnEveryRank)) process.exitCode = 1;
    });

  bench
    .command('weights')
    .description("one weights version from a trainer to an engine: through a folder (what --weight-transfer folder does) beside a TCP weight link on loopback (docs/serve.md)")
    .option('--model <dir>', 'a Qwen3 checkpoint folder')
    .option('--shape <name>', 'random weights of a shape: tiny | small | s3-mini | qwen3-0.6b | qwen3-1.7b', 'qwen3-0.6b')
    .option('--repetitions <n>', 'versions sent each way, alternated, after one untimed round (median reported)', '3')
    .option('--json', 'print JSON')
    .action(async (options: { model?: string; shape: string; repetitions: string; json?: boolean }) => {
      const report = await benchWeights({ model: options.model, shape: options.shape, repetitions: parseIntegerFlag('--repetitions', options.repetitions, 1) });
      const line = (name: string, f: WeightRouteFigures) =>
        `${name}: median ${f.medianSeconds.toFixed(3)} s for ${(f.bytes / 1e9).toFixed(3)} GB (${f.gbytesPerSecond.toFixed(2)} GB/s)`;
      print(options.json, report, () =>
        [
          `${report.model}, trainer on ${report.trainer}`,
          line('folder (save, then load)', report.folder),
          line('TCP weight link', report.link),
          `the link is ${report.linkSpeedup.toFixed(2)}× the folder's speed; the same scores after either: ${report.sameScores ? 'yes' : 'NO'}`,
        ].join('\n'),
      );
      if (!report.sameScores) process.exitCode = 1;
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

  const serveCommand = bench
    .command('serve')
    .description('the HTTP path against the in-process engine: A agents each completing one piece, side by side (docs/serve.md)')
    .option('--model <dir>', 'a Qwen3 checkpoint folder')
    .option('--shape <name>', 'random weights of a shape: tiny | small | s3-mini | qwen3-0.6b | qwen3-1.7b', 's3-mini')
    .option('--agents <n>', 'concurrent agents (one request each per round)', '64')
    .option('--history <n>', 'random history tokens per agent', '512')
    .option('--piece <n>', 'tokens generated per agent (no stop tokens)', '1024')
    .option('--rounds <n>', 'rounds of both modes, alternating which goes first', '3')
    .option('--kv-dtype <type>', KV_DTYPE_HELP, 'f32')
    .option('--json', 'print JSON');
  addDeviceFlags(serveCommand).action(
    async (options: { model?: string; shape: string; agents: string; history: string; piece: string; rounds: string; kvDtype: string; json?: boolean; device: string; weights: string }) => {
      const r = await benchServe({
        model: options.model,
        shape: options.shape,
        agents: parseIntegerFlag('--agents', options.agents, 1),
        history: parseIntegerFlag('--history', options.history, 1),
        piece: parseIntegerFlag('--piece', options.piece, 1),
        rounds: parseIntegerFlag('--rounds', options.rounds, 1),
        kvDtype: parseChoiceFlag('--kv-dtype', options.kvDtype, KV_CACHE_DTYPES),
        device: parseDeviceFlags(options),
      });
      const mode = (name: string, m: ServeModeFigures) =>
        `${name}: median ${m.medianWallSeconds.toFixed(2)} s (${m.wallSeconds.map((s) => s.toFixed(2)).join(', ')}), ${m.requestsPerSecond.toFixed(1)} requests/s, ${m.tokensPerSecond.toFixed(0)} tokens/s`;
      print(options.json, r, () =>
        [
          `model ${r.model} on ${r.runner.device}; ${r.agents} agents × (${r.history} history + ${r.piece} generated) tokens, ${r.rounds} rounds; ${r.machine.cpus} CPUs, load ${r.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')}`,
          mode('in process', r.inProcess),
          mode('over HTTP ', r.http),
          `HTTP / in-process wall time: ${r.ratio.toFixed(3)}; the same tokens both ways: ${r.sameTokens ? 'yes' : 'NO'}`,
        ].join('\n'),
      );
      if (!r.sameTokens) process.exitCode = 1;
    },
  );

  const engineCommand = bench
    .command('engine')
    .description('aggregate decode tokens/s of the inference engine with many agents against one sequence at a time; or (--soak) teams through the harness for minutes')
    .option('--model <dir>', 'a Qwen3 checkpoint folder')
    .option('--shape <name>', 'random weights of a shape: tiny | small | s3-mini | qwen3-0.6b | qwen3-1.7b (default qwen3-0.6b; small with --soak)')
    .option('--agents <n>', 'concurrent sequences', '64')
    .option('--history <n>', 'random history tokens per sequence (prefilled first)', '2048')
    .option('--piece <n>', 'tokens generated per sequence (temperature 1, no stop tokens; capped by the context)', '1024')
    .option('--baseline-agents <n>', 'sequences timed one at a time (the rate is extrapolated per sequence)', '4')
    .option('--kv-dtype <type>', KV_DTYPE_HELP, 'f32')
    .option('--soak', 'run concurrent teams of the aggregation task through the harness instead')
    .option('--lockstep', 'time the same teams (mini preset episodes) with the engine in lockstep and running free, side by side (docs/determinism.md)')
    .option('--teams <n>', 'soak: teams kept in flight (default 196); lockstep: teams per round (default 32)')
    .option('--n <n>', 'soak and lockstep: agents per team', '4')
    .option('--concurrency <n>', 'lockstep: teams in flight', '16')
    .option('--rounds <n>', 'lockstep: rounds of both modes', '3')
    .option('--minutes <m>', 'soak: minutes to keep starting teams', '3')
    .option('--json', 'print JSON');
  addDeviceFlags(engineCommand).action(
      async (options: {
        model?: string;
        shape?: string;
        agents: string;
        history: string;
        piece: string;
        baselineAgents: string;
        kvDtype: string;
        soak?: boolean;
        lockstep?: boolean;
        teams?: string;
        n: string;
        concurrency: string;
        rounds: string;
        minutes: string;
        json?: boolean;
        device: string;
        weights: string;
      }) => {
        const kvDtype = parseChoiceFlag('--kv-dtype', options.kvDtype, KV_CACHE_DTYPES);
        const device = parseDeviceFlags(options);
        if (options.lockstep) {
          const r = await benchLockstep({
            model: options.model,
            shape: options.shape ?? 's3-mini',
            teams: parseIntegerFlag('--teams', options.teams ?? '32', 1),
            n: parseIntegerFlag('--n', options.n, 1),
            concurrency: parseIntegerFlag('--concurrency', options.concurrency, 1),
            rounds: parseIntegerFlag('--rounds', options.rounds, 1),
            device,
          });
          const mode = (name: string, m: LockstepModeFigures) =>
            `${name}: median ${m.medianWallSeconds.toFixed(2)} s (${m.wallSeconds.map((s) => s.toFixed(2)).join(', ')}), ${m.tokensPerSecond.toFixed(0)} tokens/s, engine waited for JavaScript ${m.medianHeldSeconds.toFixed(2)} s; same episodes every round: ${m.sameEpisodesEveryRound ? 'yes' : 'no'}`;
          print(options.json, r, () =>
            [
              `model ${r.model} on ${r.runner.device}; ${r.teams} ${r.task} teams × ${r.n} agents, ${r.concurrency} in flight, ${r.rounds} rounds; ${r.machine.cpus} CPUs, load ${r.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')}`,
              mode('lockstep', r.lockstep),
              mode('free    ', r.free),
              `lockstep / free wall time: ${r.ratio.toFixed(3)}; the two modes gave ${r.modesAgree ? 'the same' : 'different'} episodes`,
            ].join('\n'),
          );
          if (!r.lockstep.sameEpisodesEveryRound) process.exitCode = 1;
          return;
        }
        if (options.soak) {
          const minutes = Number(options.minutes);
          if (!Number.isFinite(minutes) || minutes <= 0) throw new ConfigError(`--minutes must be a positive number; got "${options.minutes}"`);
          const r = await soakEngine({
            model: options.model,
            shape: options.shape ?? 'small',
            teams: parseIntegerFlag('--teams', options.teams ?? '196', 1),
            n: parseIntegerFlag('--n', options.n, 1),
            minutes,
            kvDtype,
            device,
          });
          const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
          print(options.json, r, () =>
            [
              `model ${r.model}; ${r.teams} teams × ${r.n} agents in flight for ${r.minutes} min (+${r.drainSeconds.toFixed(1)} s drain), load ${r.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')}`,
              `episodes ${r.episodesCompleted} completed, ${r.episodesFailed} failed${r.firstError ? ` (${r.firstError})` : ''}; ${r.generatedTokens} tokens, ${r.tokensPerSecond.toFixed(0)} tokens/s, engine busy ${(100 * r.engineBusyShare).toFixed(0)}%, ${r.preemptions} preemptions`,
              `RSS after warm-up ${mib(r.warmUp.rssBytes)} (${r.warmUp.openSequences} sequences, ${r.warmUp.kvBlocksUsed} KV blocks), at the deadline ${mib(r.atDeadline.rssBytes)}, end ${mib(r.end.rssBytes)}, peak ${mib(r.peakRssBytes)}; growth ${mib(r.rssGrowthBytes)} (${(100 * r.rssGrowthFraction).toFixed(1)}%)`,
              `progress in ${r.deadlock.windows - r.deadlock.windowsWithoutProgress} of ${r.deadlock.windows} ${r.deadlock.windowSeconds}-s windows; at the end ${r.end.openSequences} open sequences, ${r.end.kvBlocksUsed} KV blocks used: ${r.released ? 'all released' : 'NOT all released'}`,
            ].join('\n'),
          );
          if (!r.released || !r.deadlock.ok) process.exitCode = 1;
          return;
        }
        const r = await benchEngine({
          model: options.model,
          shape: options.shape ?? 'qwen3-0.6b',
          agents: parseIntegerFlag('--agents', options.agents, 1),
          history: parseIntegerFlag('--history', options.history, 1),
          piece: parseIntegerFlag('--piece', options.piece, 1),
          baselineAgents: parseIntegerFlag('--baseline-agents', options.baselineAgents, 1),
          kvDtype,
          device,
        });
        const c = r.concurrent;
        const s = r.sequential;
        print(options.json, r, () =>
          [
            `model ${r.model} on ${r.runner.device} (${r.runner.gemm}); ${r.machine.cpus} CPUs, load ${r.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')}; ${r.engine.kvCacheDtype} KV cache ${(r.engine.kvCacheBytes / 2 ** 30).toFixed(2)} GiB`,
            `${r.agents} agents × ${r.piece}-token piece after ${r.history} history tokens: prefill ${c.prefill.seconds.toFixed(2)} s, decode ${c.decode.seconds.toFixed(2)} s = ${c.decodeTokensPerSecond.toFixed(1)} tokens/s ` +
              `(${c.decode.steps} steps: ${c.decode.busyMsPerStep.toFixed(1)} ms busy + ${c.decode.overheadMsPerStep.toFixed(2)} ms outside the batch per step)`,
            `one at a time (${s.note}): prefill ${(s.prefill.seconds / s.sequences).toFixed(2)} s, decode ${(s.decode.seconds / s.sequences).toFixed(2)} s per sequence = ${s.decodeTokensPerSecond.toFixed(1)} tokens/s ` +
              `(${s.decode.busyMsPerStep.toFixed(1)} ms busy + ${s.decode.overheadMsPerStep.toFixed(2)} ms outside per step)`,
            `speed-up ${r.speedup.toFixed(1)}×; at the end ${r.finalStats.openSequences} open sequences, ${r.finalStats.kvBlocksUsed} KV blocks used`,
          ].join('\n'),
        );
      },
    );
}
