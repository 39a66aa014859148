// The run directory's commit point: state.json records progress atomically, resume cuts metrics.jsonl
// back to the committed length and removes half-written checkpoints, a second run in the same place
// is refused, a damaged state.json is refused naming the field, and old RL checkpoints are pruned.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunDirectory } from '../../src/rl/run-directory.js';

const fresh = (): string => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 's3-run-')), 'run');

describe('RunDirectory', () => {
  it('creates config.json and state.json and refuses a second run in the same folder', () => {
    const root = fresh();
    RunDirectory.create(root, { a: 1 }, '/models/x');
    expect(JSON.parse(fs.readFileSync(path.join(root, 'config.json'), 'utf8'))).toEqual({ a: 1 });
    expect(RunDirectory.resume(root).state).toMatchObject({ format: 's3-run', updates: 0, checkpoint: null, initialModel: '/models/x', metricsBytes: 0 });
    expect(() => RunDirectory.create(root, {}, '')).toThrow(/already holds a run.*--resume/);
  });

  it('resume drops metrics lines and checkpoints written after the last commit', () => {
    const root = fresh();
    const run = RunDirectory.create(root, {}, '');
    run.appendMetrics({ stage: 'rl', update: 1 });
    const checkpoint = run.writeCheckpoint('step_1', (dir) => fs.writeFileSync(path.join(dir, 'model.safetensors'), 'w1'));
    run.commit({ updates: 1, checkpoint, nextGroup: 2 });
    // Update 2 got as far as its metrics line and a partial checkpoint, then the process died.
    run.appendMetrics({ stage: 'rl', update: 2 });
    fs.mkdirSync(path.join(root, 'checkpoints', 'step_2.partial'));
    const resumed = RunDirectory.resume(root);
    expect(resumed.state).toMatchObject({ updates: 1, checkpoint: path.join('checkpoints', 'step_1'), nextGroup: 2 });
    expect(fs.readFileSync(path.join(root, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).update)).toEqual([1]);
    expect(fs.existsSync(path.join(root, 'checkpoints', 'step_2.partial'))).toBe(false);
    expect(fs.readFileSync(path.join(root, 'checkpoints', 'step_1', 'model.safetensors'), 'utf8')).toBe('w1');
  });

  it('refuses a damaged state.json, naming the field', () => {
    const root = fresh();
    RunDirectory.create(root, {}, '');
    const file = path.join(root, 'state.json');
    const state = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify({ ...state, updates: -3 }));
    expect(() => RunDirectory.resume(root)).toThrow(/state\.json: field "updates" must be a non-negative integer, got -3/);
    fs.writeFileSync(file, '{"format": "s3-run", ');
    expect(() => RunDirectory.resume(root)).toThrow(/state\.json: not valid JSON/);
    expect(() => RunDirectory.resume(fresh())).toThrow(/holds no run/);
  });

  it('keeps the newest RL checkpoints and the protected ones', () => {
    const root = fresh();
    const run = RunDirectory.create(root, {}, '');
    for (const name of ['sft', 'step_1', 'step_2', 'step_3', 'step_10']) run.writeCheckpoint(name, (dir) => fs.writeFileSync(path.join(dir, 'f'), name));
    run.pruneCheckpoints(2, ['checkpoints/step_1']);
    expect(fs.readdirSync(path.join(root, 'checkpoints')).sort()).toEqual(['sft', 'step_1', 'step_10', 'step_3']);
  });
});
