// The live view of `swarm train`: a progress bar with ETA per stage on a terminal (SFT updates, RL
// updates with the latest reward, success and tokens/s), and one plain line per update otherwise
// (and per tenth of an evaluation's episodes), so logs stay readable when piped.
import cliProgress from 'cli-progress';
import { performance } from 'node:perf_hooks';
import type { PipelineEvent } from '../rl/train-pipeline.js';

function percent(value: number | null): string {
  return value === null ? 'n/a' : `${(100 * value).toFixed(1)}%`;
}

/** Renders pipeline events to a stream. */
export class TrainView {
  private bar: cliProgress.SingleBar | null = null;
  private evalStarted: number | null = null;

  constructor(private readonly stream: NodeJS.WriteStream = process.stdout) {}

  handle(event: PipelineEvent): void {
    switch (event.kind) {
      case 'stage':
        this.stopBar();
        if (event.stage.startsWith('eval')) this.evalStarted = performance.now();
        this.stream.write(`[${event.stage}] ${event.detail}\n`);
        return;
      case 'sft': {
        const u = event.update;
        const label = `loss ${u.loss.toFixed(3)} · ${Math.round(u.tokens / u.seconds)} tok/s`;
        this.progress('SFT', u.update, event.total, label, `sft ${u.update}/${event.total} (${u.histories}): loss ${u.loss.toFixed(4)}, grad norm ${u.gradNorm.toFixed(3)}, ${u.tokens} tokens in ${u.seconds.toFixed(1)} s`);
        return;
      }
      case 'rl': {
        const m = event.metrics;
        const label = `reward ${m.reward.toFixed(3)} · success ${(100 * m.success).toFixed(1)}% · ${Math.round(m.generatedTokensPerSecond)} gen tok/s`;
        this.progress(
          'RL',
          m.update,
          event.total,
          label,
          `update ${m.update}/${event.total}: reward ${m.reward.toFixed(4)}, success ${(100 * m.success).toFixed(1)}%, tokens ${m.tokens.toFixed(0)}, ` +
            `messages ${m.messages.toFixed(2)}, masked ${(100 * m.maskFraction).toFixed(2)}%, grad norm ${m.gradNorm?.toFixed(3) ?? 'skipped'}, ` +
            `lag ${m.policyLag.mean.toFixed(2)}, ${m.seconds.toFixed(1)} s (collect ${m.collectSeconds.toFixed(1)}, train ${m.trainSeconds.toFixed(1)}, write ${m.writeSeconds.toFixed(1)})`,
        );
        return;
      }
      case 'eval-progress': {
        // On a terminal the evaluation draws its own bar; in a log, a line at every tenth of the episodes.
        if (this.stream.isTTY) return;
        const started = this.evalStarted ?? performance.now();
        const tenth = Math.max(1, Math.ceil(event.total / 10));
        if (event.done % tenth !== 0 && event.done !== event.total) return;
        const seconds = (performance.now() - started) / 1000;
        const eta = (seconds / event.done) * (event.total - event.done);
        this.stream.write(`[eval-${event.which}] ${event.done}/${event.total} episodes, ${seconds.toFixed(0)} s, ETA ${eta.toFixed(0)} s\n`);
        return;
      }
      case 'eval': {
        this.evalStarted = null;
        this.stopBar();
        const sizes = Object.entries(event.result.summary.sizes).map(([n, size]) => `N=${n} ${percent(size.success.mean)} ± ${percent(size.success.se)}`);
        this.stream.write(`[eval-${event.which}] success ${sizes.join(', ')} (${(event.result.wallMs / 1000).toFixed(0)} s)\n`);
        return;
      }
    }
  }

  stop(): void {
    this.stopBar();
  }

  private progress(name: string, value: number, total: number, label: string, line: string): void {
    if (!this.stream.isTTY) {
      this.stream.write(`${line}\n`);
      return;
    }
    if (this.bar === null) {
      this.bar = new cliProgress.SingleBar(
        { stream: this.stream, format: `${name} {bar} {value}/{total} | {duration_formatted} | ETA {eta_formatted} | {label}`, hideCursor: true, etaBuffer: 10 },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(total, value - 1, { label: '' });
    }
    this.bar.update(value, { label });
    if (value >= total) this.stopBar();
  }

  private stopBar(): void {
    this.bar?.stop();
    this.bar = null;
  }
}
