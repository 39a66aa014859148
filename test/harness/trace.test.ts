// Trace files (docs/trace-format.md): JSONL round trips, validation that names the file and line of
// the first problem, and a versioned fixture that pins the format of traceVersion 1.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FormatError } from '../../src/errors.js';
import { parseTrace, readTrace, runEpisode, splitEpisodes, traceToJsonl, TRACE_VERSION, writeTrace } from '../../src/harness/index.js';
import { ScriptedPolicy } from '../../src/policy/index.js';
import { aggregationTask, aggregatorScript } from '../../src/tasks/index.js';
import { qwen3Tokenizer } from './helpers.js';

const FIXTURE = new URL('./fixtures/trace-v1.jsonl', import.meta.url).pathname;
const policy = new ScriptedPolicy({ tokenizer: qwen3Tokenizer(), script: aggregatorScript });
const episode = () => runEpisode({ task: aggregationTask, problem: { id: 'aggregation/fixture', numbers: [42, 7, 42] }, n: 3, policy, seed: 'fixture' });

function tempFile(name: string, text?: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 's3-trace-')), name);
  if (text !== undefined) writeFileSync(path, text);
  return path;
}

describe('trace files', () => {
  it('round-trips two episodes through writeTrace and readTrace', async () => {
    const [first, second] = await Promise.all([episode(), runEpisode({ task: aggregationTask, problem: { id: 'p2', numbers: [1, 2] }, n: 2, policy, seed: 2 })]);
    const path = tempFile('two.jsonl');
    await writeTrace(path, [...first.trace, ...second.trace]);
    const events = await readTrace(path);
    expect(events).toEqual(JSON.parse(JSON.stringify([...first.trace, ...second.trace])));
    const episodes = splitEpisodes(events);
    expect(episodes.map((item) => item.start.problemId)).toEqual(['aggregation/fixture', 'p2']);
    expect(episodes[0].end.teamSuccess).toBe(true);
    expect(episodes[0].events.at(0)).toBe(episodes[0].start);
  });

  it('reproduces the versioned fixture byte for byte (format and determinism pinned)', async () => {
    const result = await episode();
    expect(traceToJsonl(result.trace)).toBe(readFileSync(FIXTURE, 'utf8'));
    expect(JSON.parse(readFileSync(FIXTURE, 'utf8').split('\n')[0])).toMatchObject({ type: 'episode_start', traceVersion: TRACE_VERSION });
  });

  it('names the file and line of a line that is not JSON', async () => {
    const text = readFileSync(FIXTURE, 'utf8').split('\n');
    text[3] = '{"type": "piece", ';
    const path = tempFile('bad.jsonl', text.join('\n'));
    await expect(readTrace(path)).rejects.toThrow(new RegExp(`^${path}:4: not valid JSON`));
  });

  it('rejects an unknown event type and a field of the wrong kind', () => {
    expect(() => parseTrace('{"type": "teleport"}\n', 'x.jsonl')).toThrow(/x\.jsonl:1: unknown event type "teleport"/);
    const start = readFileSync(FIXTURE, 'utf8').split('\n')[0];
    const bad = `${start}\n{"type": "idle", "agent": 7}\n`;
    expect(() => parseTrace(bad, 'y.jsonl')).toThrow(/y\.jsonl:2: idle event: field "agent" must be string, got number/);
  });

  it('rejects another trace version', () => {
    const start = JSON.parse(readFileSync(FIXTURE, 'utf8').split('\n')[0]) as Record<string, unknown>;
    expect(() => parseTrace(`${JSON.stringify({ ...start, traceVersion: 2 })}\n`, 'v2.jsonl')).toThrow(/v2\.jsonl:1: traceVersion 2 is not supported/);
  });

  it('rejects events outside an episode and a truncated episode', () => {
    const lines = readFileSync(FIXTURE, 'utf8').trimEnd().split('\n');
    expect(() => parseTrace(`${lines[1]}\n`, 'a.jsonl')).toThrow(/a\.jsonl:1: prompt event outside an episode/);
    expect(() => parseTrace(`${lines.slice(0, -1).join('\n')}\n`, 'b.jsonl')).toThrow(FormatError);
    expect(() => parseTrace(`${lines.slice(0, -1).join('\n')}\n`, 'b.jsonl')).toThrow(/truncated/);
  });

  it('names a file that cannot be read', async () => {
    await expect(readTrace('/nonexistent/trace.jsonl')).rejects.toThrow(/cannot read the trace file \/nonexistent\/trace\.jsonl/);
  });
});
