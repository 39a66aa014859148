// `swarm train` end to end on the built-in s3-mini model, shrunk to seconds: the s³ learner on
// aggregation (SFT warm start, evaluations before and after, two RL updates, report) and the solo
// learner on exploration; and a run killed with SIGKILL in the middle of an update that resumes to
// exactly the weights of an uninterrupted run.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');

/** Settings that make a mini run take seconds. */
const TINY = [
  'sft.excerptUpdates=1', 'sft.updates=1', 'sft.demonstrations=4', 'sft.demonstrationTeamSizes=2', 'sft.maxSequenceTokens=2048', 'sft.packedSequences=1',
  'problemsPerUpdate=1', 'attemptsPerProblem=2', 'teamSize=2', 'workAllowance=160', 'generationPieceTokens=32', 'contextLength=1024',
  'evaluation.teamSizes=2', 'evaluation.seeds=1', 'evaluation.problems=2',
].flatMap((s) => ['--set', s]);

function train(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [swarm, 'train', ...args], { encoding: 'utf8' });
}

function metrics(run: string): Record<string, unknown>[] {
  return fs.readFileSync(path.join(run, 'metrics.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 's3-train-'));

describe('swarm sft', () => {
  it('fine-tunes a fresh s3-mini on scripted demonstrations and writes a loadable Hugging Face folder', () => {
    const out = path.join(tmp(), 'sft');
    const result = spawnSync(process.execPath, [swarm, 'sft', '--out', out, ...['sft.excerptUpdates=1', 'sft.updates=2', 'sft.demonstrations=3', 'sft.demonstrationTeamSizes=2', 'sft.packedSequences=1', 'sft.maxSequenceTokens=2048'].flatMap((s) => ['--set', s])], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/wrote .*3 SFT updates on 3 of 3 scripted episodes/);
    const losses = fs.readFileSync(path.join(out, 'sft-metrics.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { loss: number }).loss);
    expect(losses).toHaveLength(3);
    expect(losses[2]).toBeLessThan(losses[0]);
    const logits = spawnSync(process.execPath, [swarm, 'model', 'logits', '--model', out, '--ids', '1,2,3', '--json'], { encoding: 'utf8' });
    expect(logits.status).toBe(0);
    expect((JSON.parse(logits.stdout) as { logits: number[][] }).logits).toHaveLength(3);
    expect(fs.existsSync(path.join(out, 'tokenizer.json'))).toBe(true);
  }, 120_000);
});

describe('swarm train', () => {
  it('runs the mini pipeline with the s3 learner on aggregation: SFT, evaluation, two RL updates, evaluation, report', () => {
    const run = path.join(tmp(), 'run');
    // With the KL penalty on (k3 against the SFT policy), so the reference policy is exercised too.
    const result = train(['--out', run, '--set', 'rlUpdates=2', '--set', 'pgCorrection.klCoefficient=0.01', '--set', 'pgCorrection.klEstimator=k3', ...TINY]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/\[sft\]/);
    expect(result.stdout).toMatch(/update 2\/2: reward/);
    const lines = metrics(run);
    expect(lines.filter((l) => l.stage === 'sft')).toHaveLength(2);
    const rl = lines.filter((l) => l.stage === 'rl');
    expect(rl.map((l) => l.update)).toEqual([1, 2]);
    // The first update's policy is the reference itself: KL 0 up to rounding (later ones move only if some group had an advantage).
    expect(rl[0].kl as number).toBeLessThan(1e-6);
    expect(rl[1].kl as number).toBeGreaterThanOrEqual(0);
    for (const line of rl) {
      expect(line.episodes).toBe(2);
      for (const field of ['reward', 'success', 'tokens', 'loss', 'kl', 'maskFraction', 'gradNorm', 'lr', 'trainSeconds']) expect(Number.isFinite(line[field] as number)).toBe(true);
      // With the KL penalty every agent's history is trained, and the four share their system turn (the compact
      // prompt puts names in the first user turn), so the trainer computes it once, not four times.
      expect(line.sharedPrefixTokens as number).toBeGreaterThan(3 * 200);
      expect(line.sharedPrefixTokens as number).toBeLessThan(line.trainTokens as number);
    }
    for (const file of ['checkpoints/step_2/model.safetensors', 'checkpoints/step_2/tokenizer.json', 'checkpoints/sft/model.safetensors', 'eval/before/summary.json', 'eval/after/summary.json', 'report.html', 'traces/update_2.jsonl.gz']) {
      expect(fs.existsSync(path.join(run, file)), file).toBe(true);
    }
    expect(JSON.parse(fs.readFileSync(path.join(run, 'state.json'), 'utf8'))).toMatchObject({ updates: 2, evalAfterDone: true });
    expect(fs.readFileSync(path.join(run, 'report.html'), 'utf8')).toMatch(/Training curves/);
    // `swarm eval --run` evaluates a checkpoint with the run's own episode settings: it reproduces the run's after-evaluation episode by episode.
    const evalOut = path.join(tmp(), 'eval');
    const evaluation = spawnSync(process.execPath, [swarm, 'eval', '--model', path.join(run, 'checkpoints', 'step_2'), '--run', run, '--sizes', '2', '--seeds', '1', '--problems', '2', '--out', evalOut], { encoding: 'utf8' });
    expect(evaluation.stderr).toBe('');
    expect(evaluation.status).toBe(0);
    const episodes = (dir: string) =>
      fs.readFileSync(path.join(dir, 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => {
        const { episodeSeed, success, tokens, messageCalls } = JSON.parse(line) as Record<string, unknown>;
        return { episodeSeed, success, tokens, messageCalls };
      }).sort((a, b) => String(a.episodeSeed).localeCompare(String(b.episodeSeed)));
    expect(episodes(evalOut)).toHaveLength(2);
    expect(episodes(evalOut)).toEqual(episodes(path.join(run, 'eval', 'after')));
    const mismatched = spawnSync(process.execPath, [swarm, 'eval', '--model', path.join(run, 'checkpoints', 'step_2'), '--run', run, '--task', 'exploration', '--out', path.join(tmp(), 'eval')], { encoding: 'utf8' });
    expect(mismatched.status).toBe(1);
    expect(mismatched.stderr).toMatch(/--task exploration differs from the task of --run .* \(aggregation-digits\)/);
    // A finished run refuses to be started again in place.
    const again = train(['--out', run, ...TINY]);
    expect(again.status).not.toBe(0);
    expect(again.stderr).toMatch(/already holds a run/);
  }, 300_000);

  it('collects asynchronously, dropping groups that lag more than maxPolicyLag weight versions', () => {
    const run = path.join(tmp(), 'run');
    // Collection runs one update ahead; with maxPolicyLag 0 every group sampled before the last weight swap is dropped and recollected.
    // The KL penalty gives every update a gradient (tied groups alone take no step, so the weights would never change).
    const kl = ['--set', 'pgCorrection.klCoefficient=0.01', '--set', 'pgCorrection.klEstimator=k3'];
    const result = train(['--out', run, '--no-eval', '--set', 'rlUpdates=3', '--set', 'synchronousCollection=false', '--set', 'maxPolicyLag=0', ...kl, ...TINY]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const rl = metrics(run).filter((l) => l.stage === 'rl');
    expect(rl.map((l) => l.update)).toEqual([1, 2, 3]);
    for (const line of rl) expect((line.policyLag as { max: number }).max).toBe(0);
    expect(rl.reduce((sum, l) => sum + (l.groupsDroppedForLag as number), 0)).toBeGreaterThan(0);
  }, 300_000);

  it('runs the solo learner on exploration, with rollouts from FP8 weights and an FP8 KV cache', () => {
    const run = path.join(tmp(), 'run');
    const result = train([
      '--out', run, '--learner', 'solo', '--no-eval',
      // No SFT stage: exploration demonstrations are thousands of tokens per agent (a random s3-mini explores instead).
      ...['task=exploration', 'rlUpdates=2', 'sft=null', 'problemsPerUpdate=1', 'attemptsPerProblem=1', 'teamSize=2', 'workAllowance=96', 'finalAllowance=1',
        'generationPieceTokens=32', 'contextLength=1024', 'concurrentSoloEpisodes=4', 'precision.rolloutWeights=fp8', 'precision.rolloutKvCache=fp8'].flatMap((s) => ['--set', s]),
    ]);
    expect(result.stderr).toBe('');
    // App. A.1's exploration numerics, as the engine itself reports them.
    expect(result.stdout).toMatch(/\[rl\] 2 RL updates \(learner solo\); rollouts on cpu \(cpu [a-z0-9]+; 1\.00 GiB of KV cache for \d+ positions, up to 64 sequences a step\) with fp8 weights and a fp8 KV cache/);
    expect(result.status).toBe(0);
    const rl = metrics(run).filter((l) => l.stage === 'rl');
    expect(rl.map((l) => l.update)).toEqual([1, 2]);
    // Solo: attempts × N = 2 single-agent episodes per problem.
    expect(rl.every((l) => l.episodes === 2 && l.messages === 0)).toBe(true);
  }, 300_000);

  it.each(['f32', 'bf16'])('resumes a run killed mid-update to exactly the weights of an uninterrupted run (%s AdamW moments)', async (stateDtype) => {
    const args = ['--set', 'rlUpdates=3', '--set', `optimizer.stateDtype=${stateDtype}`, '--no-eval', ...TINY];
    const straight = path.join(tmp(), 'run');
    expect(train(['--out', straight, ...args]).status).toBe(0);
    // Without a KL penalty an update whose groups all tied has no gradient, so it takes no optimizer step.
    const rl = metrics(straight).filter((l) => l.stage === 'rl');
    for (const line of rl) expect(line.stepSkipped).toBe(line.zeroAdvantageGroups === line.groups);
    for (const line of rl.filter((l) => l.stepSkipped)) expect([line.gradNorm, line.lr]).toEqual([null, null]);

    const killed = path.join(tmp(), 'run');
    const child = spawn(process.execPath, [swarm, 'train', '--out', killed, ...args], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    // Kill as soon as update 1 is committed: the process is then inside update 2.
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const file = path.join(killed, 'state.json');
      if (fs.existsSync(file) && (JSON.parse(fs.readFileSync(file, 'utf8')) as { updates: number }).updates >= 1) break;
    }
    child.kill('SIGKILL');
    await exited;
    const state = JSON.parse(fs.readFileSync(path.join(killed, 'state.json'), 'utf8')) as { updates: number };
    expect(state.updates).toBeLessThan(3);

    const resumed = train(['--out', killed, '--resume', '--no-eval']);
    expect(resumed.stderr).toBe('');
    expect(resumed.status).toBe(0);
    const weights = (run: string) => fs.readFileSync(path.join(run, 'checkpoints', 'step_3', 'model.safetensors'));
    expect(weights(killed).equals(weights(straight))).toBe(true);
    const strip = (lines: Record<string, unknown>[]) => lines.map((l) => [l.stage, l.update, l.loss, l.reward, l.gradNorm]);
    expect(strip(metrics(killed))).toEqual(strip(metrics(straight)));
    const trainerState = path.join(killed, 'checkpoints', 'step_3', 'trainer_state.json');
    expect((JSON.parse(fs.readFileSync(trainerState, 'utf8')) as { adamw: { state_dtype: string } }).adamw.state_dtype).toBe(stateDtype);
  }, 600_000);
});
