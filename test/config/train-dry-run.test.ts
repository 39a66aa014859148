// `swarm train --dry-run` end to end (from dist): the plans of both paper presets hold every value
// of the paper's Table 4 (written here from the table, not from the presets), `--json` prints the
// config, and a paper preset without --model is refused before anything runs (training itself:
// test/cli/train.test.ts).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const train = (args: string[]) => spawnSync(process.execPath, [swarm, 'train', ...args], { encoding: 'utf8' });

/** The plan's rows as setting → [value, source]. */
function planRows(stdout: string): Map<string, [string, string]> {
  const rows = new Map<string, [string, string]>();
  for (const line of stdout.split('\n')) {
    const cells = line.split(/ {2,}/);
    if (cells.length >= 3 && !line.startsWith(' ')) rows.set(cells[0], [cells[1], cells[2]]);
  }
  return rows;
}

// Table 4 (Appendix I), first column: information aggregation.
const TABLE4_AGGREGATION: Record<string, string> = {
  'model.name': 'Qwen3-0.6B',
  'model.thinking': 'true',
  sft: 'none', // initial policy: base model
  rlUpdates: '200',
  problemsPerUpdate: '32',
  attemptsPerProblem: '8',
  teamSize: '4',
  workAllowance: '8192',
  finalAllowance: '1024',
  generationPieceTokens: '1024',
  contextLength: '40960',
  temperature: '1.0',
  tokenCost: '0.25',
  concurrentEpisodes: '256',
  maxPolicyLag: '4',
  'optimizer.betas': '(0.9, 0.999)',
  'optimizer.epsilon': '1e-8',
  'optimizer.learningRate': '5e-7',
  'optimizer.warmupUpdates': '0',
  'optimizer.weightDecay': '0',
  'optimizer.gradClipNorm': '1.0',
  'pgCorrection.icePopLow': '0.2', // probability mask (Eq. 6)
  'pgCorrection.icePopHigh': '5.0',
  'pgCorrection.klEstimator': 'k3', // KL penalty
  'pgCorrection.scoreCenteringDraws': '0', // K: —
  'precision.rolloutWeights': 'bf16', // BF16 inference
  'precision.train': 'f32', // FP32 optimizer and gradient reduction
  checkpointEvery: '1',
};

// Table 4 (Appendix I), second column: decentralized exploration; SFT from Appendix L.
const TABLE4_EXPLORATION: Record<string, string> = {
  'model.name': 'Qwen3-1.7B',
  'model.thinking': 'true',
  'precision.rolloutWeights': 'fp8', // FP8 weights and KV cache
  'precision.rolloutKvCache': 'fp8',
  'precision.train': 'bf16', // App. A.1: BF16 forward and backward, FP32 optimization parameters
  'sft.updates': '50',
  'sft.packedSequences': '8',
  'sft.maxSequenceTokens': '32768',
  'sft.learningRate': '1e-5',
  rlUpdates: '200',
  problemsPerUpdate: '16',
  attemptsPerProblem: '8',
  teamSize: '4',
  workAllowance: '8192',
  finalAllowance: '1',
  generationPieceTokens: '1024',
  contextLength: '32768',
  temperature: '1.0',
  tokenCost: '0.25',
  concurrentEpisodes: '196',
  concurrentSoloEpisodes: '784',
  maxPolicyLag: '4',
  'optimizer.betas': '(0.9, 0.999)',
  'optimizer.epsilon': '1e-8',
  'optimizer.learningRate': '2.5e-7',
  'optimizer.warmupUpdates': '0',
  'optimizer.weightDecay': '0',
  'optimizer.gradClipNorm': '1.0',
  'pgCorrection.icePopLow': '0.2',
  'pgCorrection.icePopHigh': '5.0',
  'pgCorrection.klCoefficient': '0',
  'pgCorrection.scoreCenteringDraws': '32',
  checkpointEvery: '1',
};

describe('swarm train --dry-run', () => {
  it('prints every Table 4 value of paper-aggregation, with the learning rate as 5e-7', () => {
    const result = train(['--preset', 'paper-aggregation', '--model', '/nonexistent/qwen3-0.6b', '--dry-run']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/5e-0?7/);
    const rows = planRows(result.stdout);
    for (const [setting, value] of Object.entries(TABLE4_AGGREGATION)) expect([setting, rows.get(setting)?.[0]]).toEqual([setting, value]);
    expect(rows.get('model.directory')).toEqual(['/nonexistent/qwen3-0.6b', 'flag']);
    expect(rows.get('rlUpdates')?.[1]).toBe('preset');
    expect(result.stdout).toMatch(/256 \(32 problems × 8 attempts\)/);
  });

  it('prints every Table 4 value of paper-exploration', () => {
    const result = train(['--preset', 'paper-exploration', '--dry-run']);
    expect(result.status).toBe(0);
    const rows = planRows(result.stdout);
    for (const [setting, value] of Object.entries(TABLE4_EXPLORATION)) expect([setting, rows.get(setting)?.[0]]).toEqual([setting, value]);
    expect(result.stdout).toMatch(/128 \(16 problems × 8 attempts\)/);
  });

  it('shows the source of each setting: preset, file or flag', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-train-plan-'));
    const file = path.join(dir, 'run.json');
    fs.writeFileSync(file, JSON.stringify({ preset: 'paper-aggregation', rlUpdates: 20 }));
    const result = train(['--config', file, '--set', 'teamSize=2', '--learner', 'solo', '--dry-run']);
    expect(result.status).toBe(0);
    const rows = planRows(result.stdout);
    expect(rows.get('rlUpdates')).toEqual(['20', 'file']);
    expect(rows.get('teamSize')).toEqual(['2', 'flag']);
    expect(rows.get('learner')).toEqual(['solo', 'flag']);
    expect(rows.get('contextLength')).toEqual(['40960', 'preset']);
  });

  it('places trainer and engine by the config\'s device: auto in the paper presets, cpu in mini, --device as a flag', () => {
    expect(planRows(train(['--preset', 'paper-aggregation', '--model', '/nonexistent', '--dry-run']).stdout).get('device')).toEqual(['auto', 'preset']);
    expect(planRows(train(['--dry-run']).stdout).get('device')).toEqual(['cpu', 'preset']);
    expect(planRows(train(['--device', 'cuda', '--dry-run']).stdout).get('device')).toEqual(['cuda', 'flag']);
    const bad = train(['--device', 'tpu', '--dry-run']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/device/);
  });

  it('lists the mini preset\'s deviations from the paper', () => {
    const result = train(['--dry-run']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/preset mini/);
    expect(result.stdout).toMatch(/deviations from the paper:\n {2}- model: built-in s3-mini/);
  });

  it('never says "deviations: none" where a setting is recorded but not applied', () => {
    const exploration = train(['--dry-run', '--preset', 'paper-exploration']);
    expect(exploration.stdout).not.toMatch(/deviations from the paper: none/);
    expect(exploration.stdout).not.toMatch(/- precision\.train = f32/);
    expect(exploration.stdout).toMatch(/- precision\.train = bf16: the linear layers', the LM head's and attention's products .* but the softmax, the norms, RoPE and SwiGLU compute in f32/);
    expect(exploration.stdout).toMatch(/- precision: rollouts sample from fp8 weights with a fp8 KV cache, but the engine \(CPU and CUDA alike\) computes activations in f32/);
    const aggregation = train(['--dry-run', '--preset', 'paper-aggregation']);
    expect(aggregation.stdout).toMatch(/- precision: rollouts sample from bf16 weights with a bf16 KV cache/);
    expect(train(['--dry-run']).stdout).not.toMatch(/- precision: rollouts sample/); // the mini samples in f32
    expect(train(['--dry-run']).stdout).not.toMatch(/- precision\.train/); // and trains in f32
    expect(aggregation.stdout).not.toMatch(/- precision\.train/); // Table 4: FP32 in aggregation
  });

  it('states its readings of the paper, with the sentences they rest on', () => {
    const mini = train(['--dry-run']);
    expect(mini.stdout).toMatch(/readings of the paper:\n {2}- token cost and token efficiency: L = workAllowance \+ finalAllowance = 288 per agent/);
    expect(mini.stdout).not.toMatch(/no-comm starts/);
    const noComm = train(['--dry-run', '--learner', 'no-comm']);
    expect(noComm.stdout).toMatch(/no-comm starts from the team SFT policy .*"The no-communication and individual-reward exploration controls start from the same fine-tuned team policy", App\. A/);
    const paper = train(['--dry-run', '--preset', 'paper-aggregation']);
    expect(paper.stdout).toMatch(/L = workAllowance \+ finalAllowance = 9216 per agent/);
    expect(paper.stdout).toMatch(/asynchronous collection, deterministic: .*one update off policy/);
    expect(train(['--dry-run', '--preset', 'paper-aggregation', '--nondeterministic']).stdout).toMatch(/asynchronous collection, free \(--nondeterministic\)/);
    expect(paper.stdout).toMatch(/- reasoning: every agent keeps all its reasoning in its history, in both tasks \("all reasoning retained", Table 4, exploration\)/);
    expect(paper.stdout).toMatch(/- precision: the sampler runs bf16 weights .* a bf16 KV cache; the trainer computes in f32; .*meanAbsLogRatio/);
    expect(train(['--dry-run', '--set', 'model.thinking=false']).stdout).not.toMatch(/- reasoning:/);
  });

  it('prints the resolved config as JSON with --json', () => {
    const result = train(['--preset', 'paper-aggregation', '--set', 'optimizer.learningRate=1e-6', '--dry-run', '--json']);
    expect(result.status).toBe(0);
    const config = JSON.parse(result.stdout);
    expect(config.optimizer.learningRate).toBe(1e-6);
    expect(config.contextLength).toBe(40_960);
    expect(config.sft).toBeNull();
  });

  it('refuses an unknown preset, naming the presets', () => {
    const result = train(['--preset', 'paper-agg', '--dry-run']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/--preset: unknown preset "paper-agg"; expected one of mini, paper-aggregation, paper-exploration/);
  });

  it('refuses a bad --set before anything else', () => {
    const result = train(['--set', 'optimizer.learningRate=fast', '--dry-run']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/--set optimizer.learningRate=fast: optimizer.learningRate must be a finite number > 0, got "fast"/);
  });
});

describe('swarm train without --dry-run', () => {
  it('validates the config first', () => {
    const result = train(['--set', 'teamSize=0']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/--set teamSize=0: teamSize must be an integer >= 1, got 0/);
  });

  it('asks for --model when a paper preset has none', () => {
    const result = train(['--preset', 'paper-exploration']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/pass its Hugging Face folder with --model DIR/);
  });
});

describe('swarm train --dry-run --learner solo', () => {
  it('counts single-agent episodes per update: G·N per problem (Table 5)', () => {
    const result = train(['--preset', 'paper-exploration', '--learner', 'solo', '--dry-run']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/single-agent episodes per update: 512 \(16 problems × 32 episodes\)/);
  });
});
