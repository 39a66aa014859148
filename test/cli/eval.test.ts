// `swarm eval` through the compiled CLI (bin/swarm.js runs dist/; `npm test` builds it first, so run
// `npm run build` before running this file alone): the contract's summary.json shape, the eval
// directory, the printed table, resuming, --no-comm, and the refusals (a model without tokenizer, bad flags).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const dataDir = mkdtempSync(path.join(tmpdir(), 's3-splits-'));
const run = (args: string[]) => spawnSync(process.execPath, [swarm, ...args], { encoding: 'utf8', env: { ...process.env, S3_DATA_DIR: dataDir } });

describe('swarm eval --policy scripted', () => {
  const out = mkdtempSync(path.join(tmpdir(), 's3-eval-cli-'));
  const args = ['eval', '--policy', 'scripted', '--task', 'aggregation', '--sizes', '2', '--seeds', '2', '--problems', '2', '--out', out];

  it('writes summary.json with every required metric as {mean, perSeed}, episodes.jsonl and traces', () => {
    const result = run(args);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const summary = JSON.parse(readFileSync(path.join(out, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ schemaVersion: 1, task: 'aggregation', comm: true, seeds: [1, 2], temperature: 1 });
    for (const metric of ['success', 'tokens', 'tokenEfficiency', 'messageCalls', 'centralization', 'reciprocity']) {
      expect(typeof summary.sizes['2'][metric].mean, metric).toBe('number');
      expect(summary.sizes['2'][metric].perSeed, metric).toHaveLength(2);
    }
    const records = readFileSync(path.join(out, 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(records).toHaveLength(4);
    for (const record of records) expect(existsSync(path.join(out, record.trace))).toBe(true);
    expect(result.stdout).toMatch(/^\s*N\s+success %\s+tokens\/team\s+efficiency\s+messages\/team\n\s*2\s+100\.00 ± 0\.00 /);
    expect(result.stdout).toMatch(/wrote .*summary\.json: 4 episodes run, 0 already done/);
  });

  it('--messages drop: the ablation is recorded, fails the scripted teams, refuses another ablation in the same directory, and shows in swarm compare', () => {
    const dropped = mkdtempSync(path.join(tmpdir(), 's3-eval-drop-'));
    const ablated = ['eval', '--policy', 'scripted', '--task', 'aggregation', '--sizes', '2', '--seeds', '2', '--problems', '2', '--messages', 'drop', '--out', dropped];
    const result = run(ablated);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const summary = JSON.parse(readFileSync(path.join(dropped, 'summary.json'), 'utf8'));
    expect(summary.messages).toBe('drop');
    expect(summary.sizes['2'].success.mean).toBe(0);
    const other = run([...ablated.slice(0, -4), '--messages', 'delay:2', '--out', dropped]);
    expect(other.status).toBe(1);
    expect(other.stderr).toMatch(/holds an evaluation with messages "drop", but this run asks for "delay:2"/);
    const compared = run(['compare', out, dropped, '--json']);
    expect(compared.status).toBe(0);
    const comparison = (JSON.parse(compared.stdout) as { comparisons: { aMessages: string | null; bMessages: string | null; metric: string; meanDiff: number }[] }).comparisons.find((c) => c.metric === 'success');
    expect(comparison).toMatchObject({ aMessages: null, bMessages: 'drop', meanDiff: 1 });
    expect(run(['compare', out, dropped]).stdout).toMatch(/\[messages drop\]/);
    const bad = run([...ablated.slice(0, -4), '--messages', 'delay:0', '--out', mkdtempSync(path.join(tmpdir(), 's3-eval-bad-'))]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/--messages: "delay:0" needs an integer ≥ 1/);
    expect(run([...ablated, '--no-comm']).stderr).toMatch(/--messages drop perturbs the message channel, which --no-comm removes/);
  });

  it('--no-thinking: scripted teams still solve it with fewer tokens; the mode is in the manifest and an evaluation resumes only in it', () => {
    const off = mkdtempSync(path.join(tmpdir(), 's3-eval-nothink-'));
    const result = run([...args.slice(0, -1), off, '--no-thinking']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/\n\s*2\s+100\.00 ± 0\.00 /);
    expect(JSON.parse(readFileSync(path.join(off, 'eval.json'), 'utf8')).thinking).toBe(false);
    expect(JSON.parse(readFileSync(path.join(off, 'summary.json'), 'utf8')).thinking).toBe(false);
    expect(JSON.parse(readFileSync(path.join(out, 'eval.json'), 'utf8'))).not.toHaveProperty('thinking');
    const tokens = (dir: string): number => JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8')).sizes['2'].tokens.mean;
    expect(tokens(off)).toBeLessThan(tokens(out));
    const mixed = run([...args.slice(0, -1), off]);
    expect(mixed.status).toBe(1);
    expect(mixed.stderr).toMatch(/holds an evaluation with thinking false, but this run asks for true/);
    // swarm compare names the mode.
    expect(run(['compare', out, off]).stdout).toMatch(/\[no thinking\]/);
    const compared = JSON.parse(run(['compare', out, off, '--json']).stdout) as { comparisons: { aThinking: boolean; bThinking: boolean }[] };
    expect(compared.comparisons[0]).toMatchObject({ aThinking: true, bThinking: false });
  });

  it('resumes in the same directory without redoing finished episodes', () => {
    const log = path.join(out, 'episodes.jsonl');
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
    writeFileSync(log, `${lines.slice(0, 3).join('\n')}\n${lines[3].slice(0, 25)}`);
    const result = run(args);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/1 episodes run, 3 already done/);
  });

  it('refuses to continue a directory with other settings', () => {
    const result = run([...args, '--no-comm']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^swarm: .* holds an evaluation with comm true, but this run asks for false/);
  });

  it('takes its problems from the split --split names', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 's3-eval-cli-'));
    const result = run(['eval', '--policy', 'scripted', '--task', 'aggregation', '--split', 'dev', '--sizes', '2', '--seeds', '1', '--problems', '2', '--out', dir]);
    expect(result.status).toBe(0);
    const records = readFileSync(path.join(dir, 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(records.map((record) => record.problemId).sort()).toEqual(['aggregation/dev/00', 'aggregation/dev/01']);
    expect(run(['eval', '--policy', 'scripted', '--task', 'aggregation', '--split', 'test', '--out', dir]).stderr).toMatch(/--split must be one of train, dev, eval, got "test"/);
  });

  it('runs exploration without messaging and prints room overlap', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 's3-eval-cli-'));
    const result = run(['eval', '--policy', 'scripted', '--task', 'exploration', '--sizes', '1,2', '--seeds', '2', '--problems', '2', '--no-comm', '--allowance', '2000', '--out', dir]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/room overlap/);
    const summary = JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ comm: false, temperature: 0.7, allowance: { tokensPerAgent: 2000, finalAnswerTokens: 1 } });
    expect(summary.sizes['2'].messageCalls.mean).toBe(0);
    expect(summary.sizes['2'].roomOverlap.count).toBe(2);
  });
});

describe('swarm eval refusals', () => {
  const out = () => mkdtempSync(path.join(tmpdir(), 's3-eval-cli-'));

  it('refuses a model folder without a tokenizer', () => {
    const result = run(['eval', '--model', out(), '--task', 'aggregation', '--out', out()]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/has no tokenizer\.json; pass --tokenizer FILE/);
  });

  it('needs exactly one of --policy scripted and --model', () => {
    expect(run(['eval', '--task', 'aggregation', '--out', out()]).stderr).toMatch(/needs exactly one of --policy scripted, --model DIR and --server URL/);
    expect(run(['eval', '--policy', 'scripted', '--out', out()]).stderr).toMatch(/needs --task NAME \(or --run DIR, whose task it then takes\)/);
    expect(run(['eval', '--policy', 'random', '--task', 'aggregation', '--out', out()]).stderr).toMatch(/--policy must be "scripted", got "random"/);
  });

  it('refuses --run on a folder that is not a training run', () => {
    const folder = out();
    const result = run(['eval', '--policy', 'scripted', '--run', folder, '--out', out()]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`${path.join(folder, 'config.json')}: ENOENT`);
    expect(result.stderr).toMatch(/expected the config\.json swarm train wrote/);
    writeFileSync(path.join(folder, 'config.json'), JSON.stringify({ task: 'aggregation' }));
    expect(run(['eval', '--policy', 'scripted', '--run', folder, '--out', out()]).stderr).toContain(path.join(folder, 'config.json'));
  });

  it('names the flag of a malformed value', () => {
    const base = ['eval', '--policy', 'scripted', '--task', 'aggregation', '--out', out()];
    expect(run([...base, '--sizes', '2,x']).stderr).toMatch(/--sizes must be an integer, got "x"/);
    expect(run([...base, '--temperature', 'hot']).stderr).toMatch(/--temperature must be a number ≥ 0, got "hot"/);
    expect(run([...base, '--seeds', '0']).stderr).toMatch(/--seeds must be at least 1, got 0/);
    expect(run(['eval', '--policy', 'scripted', '--task', 'chess', '--out', out()]).stderr).toMatch(/Unknown task "chess"/);
  });
});

describe('swarm eval --model', () => {
  it('evaluates a random small checkpoint through the inference engine and names it in summary.json', () => {
    const model = mkdtempSync(path.join(tmpdir(), 's3-eval-model-'));
    expect(run(['model', 'init', '--shape', 'small', '--seed', '2', '--out', model]).status).toBe(0);
    const out = mkdtempSync(path.join(tmpdir(), 's3-eval-cli-'));
    const result = run(['eval', '--model', model, '--task', 'aggregation', '--sizes', '2', '--seeds', '1', '--problems', '1', '--allowance', '24', '--out', out]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const summary = JSON.parse(readFileSync(path.join(out, 'summary.json'), 'utf8'));
    expect(summary.policy.model).toBe(model);
    expect(summary.sizes['2'].success.perSeed).toHaveLength(1);
  }, 300_000);
});
