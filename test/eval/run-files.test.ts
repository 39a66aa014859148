// The evaluation directory's files: episodes.jsonl (an interrupted last line is ignored and cut off
// before appending; any other bad line is an error naming file and line), gzip-compressed traces, the
// manifest that refuses resuming with other settings, and the bounded worker pool.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, FormatError } from '../../src/errors.js';
import {
  claimEvalDirectory,
  episodeSeed,
  EpisodeLogWriter,
  readEpisodeLog,
  readTraceFile,
  runPool,
  traceFilePath,
  writeTraceFile,
  type EpisodeRecord,
  type EvalManifest,
} from '../../src/eval/run/index.js';
import { TraceBuilder } from './metrics-traces.js';

const temporary = () => mkdtemp(join(tmpdir(), 's3-run-files-'));

function record(seed: number): EpisodeRecord {
  const key = { seed, problemId: 'p/0', n: 2 };
  return {
    ...key,
    episodeSeed: episodeSeed(key),
    trace: traceFilePath(key),
    success: true,
    tokens: 10,
    messageCalls: 0,
    deliveries: 0,
    centralization: null,
    reciprocity: null,
    weightedReciprocity: null,
    sendGini: null,
    readBeforeFirstSendShare: null,
    readBeforeSendShare: null,
    structure: 'silentAgent',
    numbersSentShare: 0,
    numbersSentAndReadShare: 0,
    roomOverlap: null,
    exitDoor: null,
    claims: null,
    duplicateClaims: null,
    reports: null,
    falseExhaustedReports: null,
    falseReportRead: null,
    falseReportShare: null,
  };
}

describe('episode seeds and trace paths', () => {
  it('use the eval/<seed>/<problem>/<N> namespace and one file per (N, seed, problem)', () => {
    const key = { seed: 3, problemId: 'exploration-d3/eval/07', n: 4 };
    expect(episodeSeed(key)).toBe('eval/3/exploration-d3/eval/07/4');
    expect(traceFilePath(key)).toBe(join('traces', 'N4', 'seed3', 'exploration-d3_eval_07.jsonl.gz'));
  });
});

describe('episode log', () => {
  it('reads a missing log as empty', async () => {
    expect(await readEpisodeLog(join(await temporary(), 'episodes.jsonl'))).toEqual({ records: [], completeBytes: 0 });
  });

  it('reads a record of an older evaluation, without the metrics added since, with those metrics null', async () => {
    const path = join(await temporary(), 'episodes.jsonl');
    const { weightedReciprocity: _w, readBeforeSendShare: _r, falseReportRead: _f, falseReportShare: _s, ...older } = record(1);
    await writeFile(path, `${JSON.stringify(older)}\n`);
    expect((await readEpisodeLog(path)).records).toEqual([record(1)]);
  });

  it('ignores an interrupted last line and cuts it off before appending', async () => {
    const path = join(await temporary(), 'episodes.jsonl');
    const first = `${JSON.stringify(record(1))}\n`;
    await writeFile(path, `${first}{"seed": 2, "probl`);
    const log = await readEpisodeLog(path);
    expect(log.records).toEqual([record(1)]);
    expect(log.completeBytes).toBe(Buffer.byteLength(first));
    const writer = await EpisodeLogWriter.open(path, log.completeBytes);
    await Promise.all([writer.append(record(2)), writer.append(record(3))]);
    await writer.close();
    expect((await readEpisodeLog(path)).records.map((entry) => entry.seed)).toEqual([1, 2, 3]);
    expect((await readFile(path, 'utf8')).endsWith('\n')).toBe(true);
  });

  it('refuses a malformed complete line, naming file and line', async () => {
    const path = join(await temporary(), 'episodes.jsonl');
    await writeFile(path, `${JSON.stringify(record(1))}\n{"seed": 2}\n`);
    await expect(readEpisodeLog(path)).rejects.toThrow(FormatError);
    await expect(readEpisodeLog(path)).rejects.toThrow(/episodes\.jsonl:2: field "problemId" must be string/);
  });
});

describe('trace files', () => {
  it('round-trip a trace through gzip', async () => {
    const dir = await temporary();
    const trace = new TraceBuilder({ task: 'aggregation', agents: ['a', 'b'] });
    trace.broadcast('a', 'My private number is five (5).');
    const episode = trace.end({ success: true });
    const path = join(dir, traceFilePath({ seed: 1, problemId: 'p/0', n: 2 }));
    await writeTraceFile(path, episode.events);
    expect((await readFile(path)).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(await readTraceFile(path)).toEqual(episode.events);
  });

  it('refuses a file that is not a gzip trace', async () => {
    const path = join(await temporary(), 'bad.jsonl.gz');
    await writeFile(path, 'plain text');
    await expect(readTraceFile(path)).rejects.toThrow(/cannot read the trace .*bad\.jsonl\.gz/);
  });
});

describe('claimEvalDirectory', () => {
  const manifest: EvalManifest = {
    format: 's3-eval',
    version: 1,
    task: 'exploration',
    policy: { name: 'scripted', description: 'test', model: null },
    policyKey: 'scripted:explorer:tokenizer.json',
    comm: true,
    temperature: 0.7,
    allowance: { tokensPerAgent: 8192, finalAnswerTokens: 1 },
    contextLimit: 32768,
    split: 'eval',
  };

  it('writes the manifest once and accepts the same settings again', async () => {
    const dir = await temporary();
    await claimEvalDirectory(dir, manifest);
    await claimEvalDirectory(dir, { ...manifest, policy: { ...manifest.policy, description: 'reworded' } });
    expect(JSON.parse(await readFile(join(dir, 'eval.json'), 'utf8'))).toEqual(manifest);
  });

  it('refuses other settings, naming the field and both values', async () => {
    const dir = await temporary();
    await claimEvalDirectory(dir, manifest);
    await expect(claimEvalDirectory(dir, { ...manifest, comm: false })).rejects.toThrow(ConfigError);
    await expect(claimEvalDirectory(dir, { ...manifest, temperature: 1 })).rejects.toThrow(/with temperature 0\.7, but this run asks for 1; .*another --out/);
  });
});

describe('runPool', () => {
  it('keeps at most `concurrency` jobs in flight and runs every item', async () => {
    let inFlight = 0;
    let peak = 0;
    const done: number[] = [];
    await runPool({
      items: [1, 2, 3, 4, 5, 6, 7],
      concurrency: 3,
      job: async (item) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, item % 3));
        done.push(item);
        inFlight -= 1;
      },
    });
    expect(peak).toBe(3);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('starts no new job after a failure and rethrows it once the jobs in flight settle', async () => {
    const started: number[] = [];
    const failing = runPool({
      items: [1, 2, 3, 4, 5],
      concurrency: 2,
      job: async (item) => {
        started.push(item);
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (item === 2) throw new Error('job 2 failed');
      },
    });
    await expect(failing).rejects.toThrow('job 2 failed');
    expect(started).toEqual([1, 2, 3]);
  });
});
