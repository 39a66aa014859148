// A progress bar with an ETA for long evaluations (cli-progress). It draws only on a terminal: when the
// stream is not a TTY (piped, redirected, CI) it is a silent no-op, so logs and --json output stay clean.

import cliProgress from 'cli-progress';

/** A running progress bar. */
export interface Progress {
  /** Counts one finished unit of work; a label (e.g. "N=4 seed 2") replaces the one shown beside the bar. */
  increment(label?: string): void;
  /** Finishes the bar and moves to the next line. */
  stop(): void;
}

/** How much work the bar tracks and where it draws. */
export interface ProgressOptions {
  /** Number of units (e.g. episodes) in the whole evaluation. */
  readonly total: number;
  /** Where to draw; default process.stdout. Nothing is drawn unless it is a TTY. */
  readonly stream?: NodeJS.WriteStream;
}

const SILENT: Progress = { increment: () => {}, stop: () => {} };

/** Starts a progress bar showing done/total, percent, elapsed time, ETA and the last label. */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stdout;
  if (!stream.isTTY) return SILENT;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: '{bar} {value}/{total} {percentage}% | {duration_formatted} elapsed | ETA {eta_formatted} | {label}',
      hideCursor: true,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(options.total, 0, { label: '' });
  return {
    increment: (label?: string) => (label === undefined ? bar.increment(1) : bar.increment(1, { label })),
    stop: () => bar.stop(),
  };
}
