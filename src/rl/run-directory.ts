// The run directory of `swarm train` and its commit point. Layout:
//   config.json          the resolved config (what --resume continues with)
//   state.json           progress: stages done, RL updates completed, the latest checkpoint, the
//                        next rollout group and the committed length of metrics.jsonl
//   metrics.jsonl        one line per SFT update and per RL update (docs/run-format.md)
//   checkpoints/sft      the SFT result (RL starts from it; evaluated as "before")
//   checkpoints/step_N   RL checkpoints (weights, AdamW state, step, run config, tokenizer.json); with
//                        deterministic asynchronous collection also the one before a committed update
//                        (the weights its next update's groups were collected with)
//   traces/              the training episodes of each update (all, or a trainingTraceShare sample), update_N.jsonl.gz
//   eval/before, eval/after   evaluation directories (swarm eval format)
//   report.html          the report
// state.json is written atomically after the checkpoint and the metrics line of an update are on
// disk, so a run killed at any moment resumes from its last completed update: metrics.jsonl is cut
// back to the committed length and the update is redone from the checkpoint.
import fs from 'node:fs';
import path from 'node:path';
import { syncDirectory, writeFileAtomic } from '../common/atomic-file.js';
import { upgradeSavedConfig } from '../config/saved-config.js';
import { ConfigError, FormatError } from '../errors.js';

/** Progress of a run. */
export interface RunState {
  readonly format: 's3-run';
  readonly version: 1;
  /** The checkpoint training started from (the initial model). */
  readonly initialModel: string;
  /** The SFT stage finished (or there is none). */
  readonly sftDone: boolean;
  readonly evalBeforeDone: boolean;
  /** RL updates completed. */
  readonly updates: number;
  /** The checkpoint of the latest completed stage or update, relative to the run directory; null before any. */
  readonly checkpoint: string | null;
  /** The rollout group RL continues with. */
  readonly nextGroup: number;
  /** The weights version of `checkpoint` as the inference engine counts it (each optimizer step loaded is one). */
  readonly policyVersion: number;
  /**
   * Deterministic asynchronous collection: the checkpoint whose weights (one version before
   * `checkpoint`'s) collect the next update's groups on resume, or null when the engine starts from `checkpoint`.
   */
  readonly engineCheckpoint: string | null;
  /** Bytes of metrics.jsonl that belong to committed work. */
  readonly metricsBytes: number;
  readonly evalAfterDone: boolean;
}

export const RUN_STATE_FILE = 'state.json';
export const RUN_CONFIG_FILE = 'config.json';
export const RUN_METRICS_FILE = 'metrics.jsonl';

/** Opens and writes one run directory. */
export class RunDirectory {
  private constructor(
    readonly root: string,
    private current: RunState,
  ) {}

  /** Creates a fresh run directory (refusing one that already holds a run) and writes config.json. */
  static create(root: string, config: unknown, initialModel: string): RunDirectory {
    if (fs.existsSync(path.join(root, RUN_STATE_FILE))) {
      throw new ConfigError(`${root} already holds a run (state.json); continue it with --resume, or choose another --out.`);
    }
    fs.mkdirSync(path.join(root, 'checkpoints'), { recursive: true });
    fs.mkdirSync(path.join(root, 'traces'), { recursive: true });
    writeFileAtomic(path.join(root, RUN_CONFIG_FILE), `${JSON.stringify(config, null, 2)}\n`);
    fs.writeFileSync(path.join(root, RUN_METRICS_FILE), '');
    const state: RunState = {
      format: 's3-run',
      version: 1,
      initialModel,
      sftDone: false,
      evalBeforeDone: false,
      updates: 0,
      checkpoint: null,
      nextGroup: 0,
      policyVersion: 0,
      engineCheckpoint: null,
      metricsBytes: 0,
      evalAfterDone: false,
    };
    const run = new RunDirectory(root, state);
    run.commit({});
    return run;
  }

  /** Opens a run to resume it: reads state.json and cuts metrics.jsonl back to its committed length. */
  static resume(root: string): RunDirectory {
    const file = path.join(root, RUN_STATE_FILE);
    if (!fs.existsSync(file)) throw new ConfigError(`--resume: ${root} holds no run (no ${RUN_STATE_FILE}); start one without --resume.`);
    const state = parseState(file, fs.readFileSync(file, 'utf8'));
    const metrics = path.join(root, RUN_METRICS_FILE);
    const size = fs.existsSync(metrics) ? fs.statSync(metrics).size : 0;
    if (size < state.metricsBytes) throw new FormatError(`${metrics} has ${size} bytes but ${file} committed ${state.metricsBytes}; the run directory was damaged.`);
    fs.truncateSync(metrics, state.metricsBytes);
    for (const entry of fs.readdirSync(path.join(root, 'checkpoints'))) {
      if (entry.endsWith('.partial')) fs.rmSync(path.join(root, 'checkpoints', entry), { recursive: true, force: true });
    }
    return new RunDirectory(root, state);
  }

  /** The saved config of a run (for --resume), brought up to the current fields (config/saved-config.ts). */
  static readConfig(root: string): unknown {
    const file = path.join(root, RUN_CONFIG_FILE);
    let value: unknown;
    try {
      value = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    } catch (error) {
      throw new FormatError(`${file}: ${(error as Error).message}; expected the config.json swarm train wrote.`);
    }
    return upgradeSavedConfig(value);
  }

  get state(): RunState {
    return this.current;
  }

  /** A path of the run directory (an absolute one, such as the initial model's, stays as it is). */
  resolve(relative: string): string {
    return path.resolve(this.root, relative);
  }

  /** Appends one metrics line and flushes it (committed only by the next commit()). */
  appendMetrics(record: Record<string, unknown>): void {
    const fd = fs.openSync(path.join(this.root, RUN_METRICS_FILE), 'a');
    try {
      fs.writeSync(fd, `${JSON.stringify(record)}\n`);
      fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Writes a checkpoint through `write(dir)` into checkpoints/NAME atomically (a partial folder renamed at the end). */
  writeCheckpoint(name: string, write: (directory: string) => void): string {
    const relative = path.join('checkpoints', name);
    const final = this.resolve(relative);
    const partial = `${final}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(partial, { recursive: true });
    write(partial);
    syncDirectory(partial);
    fs.rmSync(final, { recursive: true, force: true });
    fs.renameSync(partial, final);
    syncDirectory(path.dirname(final));
    return relative;
  }

  /** Deletes RL checkpoints step_N other than the newest `keep` and those listed. */
  pruneCheckpoints(keep: number, protect: readonly string[] = []): void {
    const folder = this.resolve('checkpoints');
    const steps = fs
      .readdirSync(folder)
      .map((entry) => /^step_(\d+)$/.exec(entry))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => ({ name: match[0], step: Number(match[1]) }))
      .sort((a, b) => b.step - a.step);
    const protectedNames = new Set(protect.map((p) => path.basename(p)));
    for (const entry of steps.slice(keep)) if (!protectedNames.has(entry.name)) fs.rmSync(path.join(folder, entry.name), { recursive: true, force: true });
  }

  /** Records progress atomically; metricsBytes is taken from metrics.jsonl as it is now. */
  commit(change: Partial<Omit<RunState, 'format' | 'version' | 'metricsBytes'>>): void {
    const metricsBytes = fs.statSync(path.join(this.root, RUN_METRICS_FILE)).size;
    this.current = { ...this.current, ...change, metricsBytes };
    writeFileAtomic(path.join(this.root, RUN_STATE_FILE), `${JSON.stringify(this.current, null, 2)}\n`);
  }
}

function parseState(file: string, text: string): RunState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new FormatError(`${file}: not valid JSON (${(error as Error).message}); expected the state.json swarm train writes.`);
  }
  const record = value as Record<string, unknown>;
  const expect = (field: string, kind: string, ok: (v: unknown) => boolean): void => {
    if (!ok(record[field])) throw new FormatError(`${file}: field "${field}" must be ${kind}, got ${JSON.stringify(record[field]) ?? 'nothing'}.`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FormatError(`${file}: expected a JSON object.`);
  expect('format', '"s3-run"', (v) => v === 's3-run');
  expect('version', '1', (v) => v === 1);
  expect('initialModel', 'a string', (v) => typeof v === 'string');
  for (const flag of ['sftDone', 'evalBeforeDone', 'evalAfterDone']) expect(flag, 'a boolean', (v) => typeof v === 'boolean');
  for (const count of ['updates', 'nextGroup', 'metricsBytes']) expect(count, 'a non-negative integer', (v) => Number.isSafeInteger(v) && (v as number) >= 0);
  expect('checkpoint', 'a string or null', (v) => v === null || typeof v === 'string');
  // Written by every run since deterministic collection; runs from before read as version 0 with no engine checkpoint.
  expect('policyVersion', 'a non-negative integer', (v) => v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0));
  expect('engineCheckpoint', 'a string or null', (v) => v === undefined || v === null || typeof v === 'string');
  const state = value as Partial<RunState>;
  return { ...(value as RunState), policyVersion: state.policyVersion ?? 0, engineCheckpoint: state.engineCheckpoint ?? null };
}
