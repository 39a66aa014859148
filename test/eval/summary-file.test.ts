// summary.json: the versioned fixture reads back unchanged, writes are atomic, and malformed files are
// refused with a FormatError naming the file and the field.
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { FormatError } from '../../src/errors.js';
import { formatSummaryJson, readSummary, writeSummary } from '../../src/eval/summary-file.js';
import { validateSummary } from '../../src/eval/summary-validation.js';
import { buildSummary } from './summary-builder.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/summary-v1.json', import.meta.url));
let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 's3-summary-'));
});

// The fixture parsed as plain JSON, for tests that break one field.
async function fixtureValue(): Promise<Record<string, any>> {
  return JSON.parse(await readFile(FIXTURE, 'utf8'));
}

function expectFormatError(value: unknown, message: RegExp): void {
  const validate = () => validateSummary({ value, file: 'runs/ev/summary.json' });
  expect(validate).toThrow(FormatError);
  expect(validate).toThrow(message);
}

describe('summary.json version 1 fixture', () => {
  it('reads, keeps null for undefined seeds, and writes back byte for byte', async () => {
    const summary = await readSummary(FIXTURE);
    expect(summary.seeds).toEqual([11, 12, 13]);
    expect(summary.sizes['1'].success).toEqual({ mean: 0.75, se: 0.25 / Math.sqrt(3), count: 3, perSeed: [0.5, 0.75, 1] });
    expect(summary.sizes['2'].centralization).toEqual({ mean: 0.25, se: 0.25, count: 2, perSeed: [0, 0.5, null] });
    expect(summary.sizes['1'].reciprocity.mean).toBeNull();
    expect(summary.sizes['2'].structures?.conversation.perSeed).toEqual([0.25, 0.5, 0]);
    expect(formatSummaryJson(summary)).toBe(await readFile(FIXTURE, 'utf8'));
  });
});

describe('writeSummary / readSummary', () => {
  it('round-trips a summary and leaves no temporary file behind', async () => {
    const summary = buildSummary({ name: 'explorer', task: 'exploration', sizes: { 2: { roomOverlap: [0.25, Number.NaN, 0.75], successByExitDoor: { 0: [1, 0.5, 0], 2: [0, 0, 0] } } } });
    const path = join(directory, 'nested', 'summary.json');
    await writeSummary(path, summary);
    expect(await readSummary(path)).toEqual(summary);
    expect(await readdir(join(directory, 'nested'))).toEqual(['summary.json']);
    expect(await readFile(path, 'utf8')).toContain('"perSeed": [0.25, null, 0.75]');
  });

  it('refuses to write an invalid summary and writes nothing', async () => {
    const summary = buildSummary({ name: 'bad', sizes: { 2: { success: [0.5, 0.5, 0.5] } } });
    const broken = { ...summary, seeds: [1, 2] };
    const path = join(directory, 'refused', 'summary.json');
    await expect(writeSummary(path, broken)).rejects.toThrow(/refused\/summary\.json: field sizes\["2"\]\.success\.perSeed is .*expected an array of 2 entries/);
    await expect(readdir(join(directory, 'refused'))).rejects.toThrow(/ENOENT/);
  });

  it('names the file when it is missing or not JSON', async () => {
    await expect(readSummary(join(directory, 'absent.json'))).rejects.toThrow(/absent\.json: cannot read the summary/);
    const path = join(directory, 'garbage.json');
    await writeFile(path, '{"schemaVersion": 1,', 'utf8');
    await expect(readSummary(path)).rejects.toThrow(FormatError);
    await expect(readSummary(path)).rejects.toThrow(/garbage\.json: not valid JSON/);
  });
});

describe('validateSummary', () => {
  it('refuses another schema version', async () => {
    const value = { ...(await fixtureValue()), schemaVersion: 2 };
    expectFormatError(value, /runs\/ev\/summary\.json: field schemaVersion is 2; expected 1/);
  });

  it('requires every main metric at every size', async () => {
    const value = await fixtureValue();
    delete value.sizes['2'].reciprocity;
    expectFormatError(value, /field sizes\["2"\]\.reciprocity is missing; expected a metric summary/);
  });

  it('requires room overlap for exploration', async () => {
    const value = { ...(await fixtureValue()), task: 'exploration' };
    expectFormatError(value, /field sizes\["1"\]\.roomOverlap is missing;.*required for task "exploration"/);
  });

  it('refuses unknown metric names', async () => {
    const value = await fixtureValue();
    value.sizes['1'].sucess = value.sizes['1'].success;
    expectFormatError(value, /unknown field sizes\["1"\]\.sucess; expected only: success, tokens/);
  });

  it('refuses per-seed lists that do not match the seeds', async () => {
    const value = await fixtureValue();
    value.sizes['1'].tokens.perSeed = [9000, 9500];
    expectFormatError(value, /sizes\["1"\]\.tokens\.perSeed is \[9000,9500\]; expected an array of 3 entries, one per seed/);
  });

  it('refuses a mean, SE or count that disagrees with the per-seed values', async () => {
    const mean = await fixtureValue();
    mean.sizes['1'].success.mean = 0.7;
    expectFormatError(mean, /sizes\["1"\]\.success\.mean is 0\.7; expected 0\.75 \(the mean of the non-null perSeed entries\)/);
    const count = await fixtureValue();
    count.sizes['2'].centralization.count = 3;
    expectFormatError(count, /sizes\["2"\]\.centralization\.count is 3; expected 2/);
    const se = await fixtureValue();
    se.sizes['1'].reciprocity.se = 0;
    expectFormatError(se, /sizes\["1"\]\.reciprocity\.se is 0; expected null/);
  });

  it('refuses shares outside [0, 1] and non-numeric values', async () => {
    const share = await fixtureValue();
    share.sizes['1'].success.perSeed = [0.5, 0.75, 1.5];
    expectFormatError(share, /sizes\["1"\]\.success\.perSeed\[2\] is 1\.5; expected a number in \[0, 1\]/);
    const text = await fixtureValue();
    text.sizes['2'].tokens.perSeed = [12000, '16000', 20000];
    expectFormatError(text, /sizes\["2"\]\.tokens\.perSeed\[1\] is "16000"; expected a number ≥ 0/);
  });

  it("reads a task's own metrics as declared at the top, and refuses undeclared or out-of-range ones", async () => {
    const withOwn = async (): Promise<Record<string, any>> => {
      const value = await fixtureValue();
      value.taskMetrics = { agentAccuracy: { label: 'Agents right', range: 'fraction', percent: true } };
      value.sizes['1'].taskMetrics = { agentAccuracy: structuredClone(value.sizes['1'].success) };
      return value;
    };
    const read = validateSummary({ value: await withOwn(), file: 'runs/ev/summary.json' });
    expect(read.taskMetrics).toEqual({ agentAccuracy: { label: 'Agents right', range: 'fraction', percent: true } });
    expect(read.sizes['1'].taskMetrics?.agentAccuracy.perSeed).toEqual(read.sizes['1'].success.perSeed);
    const undeclared = await withOwn();
    undeclared.sizes['1'].taskMetrics.heard = undeclared.sizes['1'].success;
    expectFormatError(undeclared, /sizes\["1"\]\.taskMetrics key "heard" is "heard"; expected a task metric declared in the top-level taskMetrics \(agentAccuracy\)/);
    const range = await withOwn();
    range.sizes['1'].taskMetrics.agentAccuracy = { mean: 2, se: null, count: 1, perSeed: [2, null, null] };
    expectFormatError(range, /sizes\["1"\]\.taskMetrics\.agentAccuracy\.perSeed\[0\] is 2; expected a number in \[0, 1\]/);
    const percent = await withOwn();
    percent.taskMetrics.agentAccuracy.range = 'nonNegative';
    expectFormatError(percent, /taskMetrics\.agentAccuracy\.percent is true; expected a boolean, true only for a fraction/);
  });

  it('checks seeds, problems, team size keys and structure classes', async () => {
    const seeds = { ...(await fixtureValue()), seeds: [11, 11, 13] };
    expectFormatError(seeds, /field seeds is \[11,11,13\]; expected distinct seeds/);
    const problems = await fixtureValue();
    problems.problems.count = 5;
    expectFormatError(problems, /field problems\.ids is .*expected an array of problems\.count = 5 problem ids/);
    const sizeKey = await fixtureValue();
    sizeKey.sizes.four = sizeKey.sizes['2'];
    expectFormatError(sizeKey, /field sizes key "four" .*expected a team size written as a positive integer/);
    const structures = await fixtureValue();
    delete structures.sizes['2'].structures.conversation;
    expectFormatError(structures, /field sizes\["2"\]\.structures\.conversation is missing; expected an object/);
    const split = await fixtureValue();
    split.problems.split = 'test';
    expectFormatError(split, /field problems\.split is "test"; expected one of train, dev, eval/);
  });
});
