// `swarm train --inference-servers`: RL rollouts collected through `swarm serve` processes, each
// update's weights written to RUN/serving/v{version} and loaded by every server. The same run through
// one server and through two gives the same metrics and the same weights; a server that restarts
// (back to its startup weights) is given the current weights again before it samples more; servers
// started with other numerics than the run's precision are refused. Through a stand-in SGLang server
// (SGLang's /generate and /update_weights_from_disk answered from a real swarm serve) the run is the
// same through one and through two, and through vLLM stand-ins (completions forwarded, each load a
// pause, reload_weights and resume) too. With --weight-transfer tcp each version goes to each server
// over a weight link instead of a folder, and the run is the same.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tokenizer } from '../../src/model/tokenizer/index.js';
import { packageRoot } from '../../src/native/addon.js';
import { AgentSequence } from '../../src/policy/agent-sequence.js';
import { RemotePolicy } from '../../src/policy/remote-policy.js';
import { ServerRollouts } from '../../src/rl/rollout-backend.js';
import { makeCheckpoint } from '../engine/helpers.js';
import { sglangStandIn, type SglangStandIn } from '../serve/sglang-stand-in.js';
import { serve, type Served } from '../serve/serve-process.js';
import { vllmStandIn } from '../serve/vllm-stand-in.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 's3-servers-'));
// A short RL run from a random model: the KL penalty gives every update a gradient even though no team succeeds.
const SETS = [
  'sft=null', 'rlUpdates=2', 'problemsPerUpdate=1', 'attemptsPerProblem=2', 'teamSize=2', 'workAllowance=48', 'finalAllowance=16',
  'generationPieceTokens=32', 'contextLength=1024', 'pgCorrection.klCoefficient=0.1', 'pgCorrection.klEstimator=k3', 'task=aggregation-digits',
].flatMap((s) => ['--set', s]);
const TIMING = ['elapsed', 'seconds', 'collectSeconds', 'writeSeconds', 'trainSeconds', 'generatedTokensPerSecond', 'trainTokensPerSecond', 'engineWaitSeconds'];

let model: string;
const servers: Served[] = [];

beforeAll(async () => {
  model = makeCheckpoint('small', 6);
  servers.push(await serve(model), await serve(model));
}, 60_000);

afterAll(() => {
  for (const server of servers) server.child.kill('SIGKILL');
});

function train(out: string, urls: string[], extra: string[] = []) {
  return spawnSync(process.execPath, [swarm, 'train', '--model', model, '--out', out, '--no-eval', ...SETS, '--inference-servers', urls.join(','), ...extra], { encoding: 'utf8' });
}

/** train() without blocking this process, for servers this process answers itself (the stand-ins). */
function trainBeside(out: string, urls: string[], extra: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [swarm, 'train', '--model', model, '--out', out, '--no-eval', ...SETS, '--inference-servers', urls.join(','), ...extra]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

// The run through one swarm serve, made once: the reference the other routes are compared with.
let directRun: string | undefined;
function direct(): string {
  if (directRun === undefined) {
    const out = path.join(tmp(), 'run');
    const result = train(out, [servers[0].url]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/rollouts on 1 inference server/);
    directRun = out;
  }
  return directRun;
}

/**
 * Trains through the first of `urls`, calls `afterOne` with that run's folder, then trains through
 * all of them; the two runs must give the same metrics and weights. Returns the first run's folder.
 */
async function expectSameThroughOneAndAll(urls: string[], protocol: string, afterOne: (run: string) => void): Promise<string> {
  const one = path.join(tmp(), 'run');
  const all = path.join(tmp(), 'run');
  const first = await trainBeside(one, urls.slice(0, 1), ['--protocol', protocol]);
  expect(first.stderr).toBe('');
  expect(first.status).toBe(0);
  afterOne(one);
  const second = await trainBeside(all, urls, ['--protocol', protocol]);
  expect(second.status).toBe(0);
  expect(metrics(one).map((row) => row.dispatchVersions)).toEqual([[0], [1]]);
  expect(metrics(all)).toEqual(metrics(one));
  expectSameWeights(one, all);
  return one;
}

function expectSameWeights(a: string, b: string): void {
  for (const file of ['model.safetensors', 'optimizer.safetensors']) {
    expect(fs.readFileSync(path.join(b, 'checkpoints', 'step_2', file)).equals(fs.readFileSync(path.join(a, 'checkpoints', 'step_2', file)))).toBe(true);
  }
}

function metrics(run: string): Record<string, unknown>[] {
  return fs
    .readFileSync(path.join(run, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const row = JSON.parse(line) as Record<string, unknown>;
      for (const key of TIMING) delete row[key];
      return row;
    });
}

describe('swarm train --inference-servers', () => {
  it('trains the same through one server and through two, loading every update into each', async () => {
    const one = direct();
    const two = path.join(tmp(), 'run');
    const second = train(two, [servers[0].url, servers[1].url]);
    expect(second.status).toBe(0);
    expect(metrics(two)).toEqual(metrics(one));
    expect(metrics(one).map((row) => row.dispatchVersions)).toEqual([[0], [1]]);
    expectSameWeights(one, two);
    // The served weights: the last two versions stay, and both servers report their latest load.
    expect(fs.readdirSync(path.join(two, 'serving')).sort()).toEqual(['v1', 'v2']);
    for (const server of servers) expect((await (await fetch(`${server.url}/health`)).json()).weightsVersion).toBeGreaterThanOrEqual(3);
  }, 180_000);

  it('trains the same with each update sent over TCP weight links, writing no serving folder', async () => {
    const one = direct();
    const linked = path.join(tmp(), 'run');
    const result = train(linked, [servers[0].url, servers[1].url], ['--weight-transfer', 'tcp']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/weights over tcp links/);
    expect(metrics(linked)).toEqual(metrics(one));
    expectSameWeights(one, linked);
    expect(fs.existsSync(path.join(linked, 'serving')) && fs.readdirSync(path.join(linked, 'serving')).length > 0).toBe(false);
    for (const server of servers) {
      const health = await (await fetch(`${server.url}/health`)).json();
      // The start weights and both updates came over this server's link.
      expect(health.weightLink).toMatchObject({ transport: 'tcp', state: 'ready', received: 3 });
    }
  }, 180_000);

  it('trains through SGLang servers, loading each update with /update_weights_from_disk, the same through one and two', async () => {
    // SGLang takes 53-bit sampling seeds, so the pieces are not those of swarm serve's 64-bit seeds:
    // the SGLang runs are compared with each other.
    const standIns = [await sglangStandIn(servers[0].url), await sglangStandIn(servers[1].url)];
    const loads = (standIn: SglangStandIn) => standIn.seen.filter((request) => request.endpoint === '/update_weights_from_disk').map((request) => request.body);
    try {
      await expectSameThroughOneAndAll(
        standIns.map((standIn) => standIn.url),
        'sglang',
        (one) =>
          expect(loads(standIns[0]).map((body) => [body.model_path, body.weight_version, body.abort_all_requests, body.flush_cache])).toEqual([
            [model, 's3-v0', false, true],
            [path.join(one, 'serving', 'v1'), 's3-v1', false, true],
            [path.join(one, 'serving', 'v2'), 's3-v2', false, true],
          ]),
      );
      expect(loads(standIns[1]).map((body) => body.weight_version)).toEqual(['s3-v0', 's3-v1', 's3-v2']);
    } finally {
      for (const standIn of standIns) standIn.close();
    }
  }, 180_000);

  it('trains through vLLM servers, each load a pause, reload_weights and resume, the same through one and two', async () => {
    // vLLM takes 53-bit seeds too: the vLLM runs are compared with each other.
    const standIns = [await vllmStandIn(servers[0].url), await vllmStandIn(servers[1].url)];
    const cycle = (folder: string) => ['pause', `reload_weights ${folder}`, 'resume'];
    try {
      await expectSameThroughOneAndAll(
        standIns.map((standIn) => standIn.url),
        'vllm',
        (one) => expect(standIns[0].calls).toEqual([...cycle(model), ...cycle(path.join(one, 'serving', 'v1')), ...cycle(path.join(one, 'serving', 'v2'))]),
      );
      expect(standIns[1].calls.filter((call) => call === 'pause')).toHaveLength(3);
      for (const standIn of standIns) expect(standIn.sentWhilePaused).toBe(0);
    } finally {
      for (const standIn of standIns) standIn.close();
    }
  }, 180_000);

  it('refuses servers whose numerics are not the run\'s precision', () => {
    const result = spawnSync(process.execPath, [swarm, 'train', '--model', model, '--out', path.join(tmp(), 'run'), '--no-eval', ...SETS, '--set', 'precision.rolloutKvCache=bf16', '--inference-servers', servers[0].url], {
      encoding: 'utf8',
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/samples with stored weights and a f32 KV cache; this run's precision asks for stored and bf16: start it with swarm serve --weights stored --kv-dtype bf16/);
  });

  it('refuses weight links to servers other than swarm serve, and --weight-transfer without servers', () => {
    const run = (extra: string[]) =>
      spawnSync(process.execPath, [swarm, 'train', '--model', model, '--out', path.join(tmp(), 'run'), '--no-eval', ...SETS, ...extra], { encoding: 'utf8' });
    const sglang = run(['--inference-servers', servers[0].url, '--protocol', 'sglang', '--weight-transfer', 'tcp']);
    expect(sglang.status).not.toBe(0);
    expect(sglang.stderr).toMatch(/--weight-transfer tcp needs our servers \(swarm serve, protocol s3\)/);
    const alone = run(['--weight-transfer', 'tcp']);
    expect(alone.status).not.toBe(0);
    expect(alone.stderr).toMatch(/--weight-transfer applies with --inference-servers only/);
    const unknown = run(['--inference-servers', servers[0].url, '--weight-transfer', 'rdma']);
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toMatch(/--weight-transfer/);
  });

  it('refuses score-centering draws and unknown protocols on servers other than swarm serve', () => {
    const train = (extra: string[]) =>
      spawnSync(process.execPath, [swarm, 'train', '--model', model, '--out', path.join(tmp(), 'run'), '--no-eval', ...SETS, '--inference-servers', servers[0].url, ...extra], { encoding: 'utf8' });
    const vllm = train(['--protocol', 'vllm', '--set', 'pgCorrection.scoreCenteringDraws=4']);
    expect(vllm.status).not.toBe(0);
    expect(vllm.stderr).toMatch(/pgCorrection.scoreCenteringDraws is 4: .*vllm servers return none/);
    const unknown = train(['--protocol', 'tgi']);
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toMatch(/--protocol/);
  });
});

describe('a restarted inference server', () => {
  it('gets the current weights again before it samples', async () => {
    const restartable = await serve(model);
    const port = new URL(restartable.url).port;
    const tokenizerPath = path.join(model, 'tokenizer.json');
    const policy = await RemotePolicy.connect({ servers: [restartable.url], tokenizer: Tokenizer.fromFile(tokenizerPath), retryDelayMs: 200, attempts: 8 });
    const rollouts = await ServerRollouts.start(
      { policy, folder: tmp(), tokenizerPath, config: {}, version: 7, numerics: { weights: 'stored', kvCacheDtype: 'f32' } },
      model,
    );
    const sequence = new AgentSequence({ agentIndex: 0, agentName: 'agent_1', samplingSeed: 5n });
    sequence.appendContext({ tokens: [1, 2, 3, 4, 5], roles: new Uint8Array(5), items: [] });
    const ask = () => policy.generate(sequence, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 5 });
    const before = await ask();
    expect(before.policyVersion).toBe(7);

    restartable.child.kill('SIGKILL');
    await restartable.exited;
    const again = await serve(model, ['--port', port]);
    servers.push(again);
    expect((await (await fetch(`${again.url}/health`)).json()).weightsVersion).toBe(0);
    const after = await ask();
    // It was reloaded (its version is 1 again, mapped to ours) and samples what it sampled before.
    expect(after.policyVersion).toBe(7);
    expect(after.tokens).toEqual(before.tokens);
    expect((await (await fetch(`${again.url}/health`)).json()).weightsVersion).toBe(1);
    expect(rollouts.version).toBe(7);
  }, 60_000);

  it('gets the snapshot of the current weights again over a new weight link', async () => {
    const restartable = await serve(model);
    const port = new URL(restartable.url).port;
    const tokenizerPath = path.join(model, 'tokenizer.json');
    const policy = await RemotePolicy.connect({ servers: [restartable.url], tokenizer: Tokenizer.fromFile(tokenizerPath), retryDelayMs: 200, attempts: 8 });
    const folder = tmp();
    const rollouts = await ServerRollouts.start(
      { policy, folder, tokenizerPath, config: {}, version: 7, numerics: { weights: 'stored', kvCacheDtype: 'f32' }, transfer: 'tcp' },
      model,
    );
    try {
      expect(rollouts.transfer).toBe('tcp');
      const sequence = new AgentSequence({ agentIndex: 0, agentName: 'agent_1', samplingSeed: 5n });
      sequence.appendContext({ tokens: [1, 2, 3, 4, 5], roles: new Uint8Array(5), items: [] });
      const ask = () => policy.generate(sequence, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 5 });
      const before = await ask();
      expect(before.policyVersion).toBe(7);

      restartable.child.kill('SIGKILL');
      await restartable.exited;
      const again = await serve(model, ['--port', port]);
      servers.push(again);
      expect((await (await fetch(`${again.url}/health`)).json()).weightLink).toBeNull();
      const after = await ask();
      expect(after.policyVersion).toBe(7);
      expect(after.tokens).toEqual(before.tokens);
      const health = await (await fetch(`${again.url}/health`)).json();
      expect(health.weightsVersion).toBe(1);
      expect(health.weightLink).toMatchObject({ transport: 'tcp', state: 'ready', received: 1 });
      expect(fs.readdirSync(folder)).toEqual([]);
    } finally {
      rollouts.close();
    }
  }, 60_000);

  it('on vLLM, after a dropped connection, gets the current weights again exactly once', async () => {
    const first = await vllmStandIn(servers[0].url);
    const port = Number(new URL(first.url).port);
    const tokenizerPath = path.join(model, 'tokenizer.json');
    const policy = await RemotePolicy.connect({ servers: [first.url], tokenizer: Tokenizer.fromFile(tokenizerPath), protocol: 'vllm', retryDelayMs: 200, attempts: 8 });
    const folder = tmp();
    await ServerRollouts.start({ policy, folder, tokenizerPath, config: {}, version: 7, numerics: { weights: 'stored', kvCacheDtype: 'f32' } }, model);
    const sequence = new AgentSequence({ agentIndex: 0, agentName: 'agent_1', samplingSeed: 5n });
    sequence.appendContext({ tokens: [1, 2, 3, 4, 5], roles: new Uint8Array(5), items: [] });
    const ask = () => policy.generate(sequence, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 5 });
    const before = await ask();
    expect(before.policyVersion).toBe(7);
    expect(first.calls.filter((call) => call === 'pause')).toHaveLength(1);

    first.close();
    // The restarted server comes back on the same port a moment after the first request fails.
    const pending = ask();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const again = await vllmStandIn(servers[0].url, port);
    try {
      const after = await pending;
      expect(after.policyVersion).toBe(7);
      expect(after.tokens).toEqual(before.tokens);
      await ask();
      expect(again.calls).toEqual(['pause', `reload_weights ${model}`, 'resume']);
    } finally {
      again.close();
    }
  }, 60_000);
});
