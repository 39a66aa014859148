// `swarm run`: one live episode with scripted, garbage or model agents, a summary, and an optional trace.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';
import { readTrace } from '../../src/harness/index.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const run = (args: string[]) => spawnSync(process.execPath, [swarm, 'run', ...args], { encoding: 'utf8' });

describe('swarm run', () => {
  it('shows a scripted aggregation team solving an eval problem, event by event', () => {
    const result = run(['--task', 'aggregation', '--n', '3', '--seed', '4']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^episode aggregation\/eval\/00 · aggregation · N=3 · messaging on/m);
    expect(result.stdout).toMatch(/✉ to all: My private number is/);
    expect(result.stdout).toMatch(/^outcome: SUCCESS/m);
  });

  it('keeps going on pure garbage output and writes a trace that reads back', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 's3-run-')), 'trace.jsonl');
    const result = run(['--task', 'exploration', '--n', '2', '--policy', 'garbage', '--allowance', '400', '--trace', file]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^outcome: (SUCCESS|failure)/m);
    const events = await readTrace(file);
    expect(events[0].type).toBe('episode_start');
    expect(events.at(-1)?.type).toBe('episode_end');
  });

  it('gives the same episode for the same seed', () => {
    expect(run(['--task', 'exploration', '--n', '3', '--seed', '9']).stdout).toBe(run(['--task', 'exploration', '--n', '3', '--seed', '9']).stdout);
  });

  it('runs a team of a Qwen3 checkpoint through the inference engine with --model', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-run-model-'));
    const init = spawnSync(process.execPath, [swarm, 'model', 'init', '--shape', 'small', '--seed', '1', '--out', dir], { encoding: 'utf8' });
    expect(init.status).toBe(0);
    const result = run(['--task', 'aggregation', '--n', '2', '--model', dir, '--allowance', '64']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^outcome: (SUCCESS|failure)/m);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses --model without a tokenizer.json', () => {
    const result = run(['--task', 'aggregation', '--model', '/tmp/nowhere']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/no tokenizer\.json/);
  });
});
