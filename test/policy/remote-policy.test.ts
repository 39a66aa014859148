// RemotePolicy against real `swarm serve` processes: `swarm eval --server` gives the same episodes,
// byte for byte, through one server, through two, and through two of which one is killed mid-run
// (its sequences move to the other; nothing is lost). Responses that would not extend the history
// are refused (a stand-in server that lies about the prompt, since no real one does). The SGLang
// protocol against a stand-in that answers /generate in SGLang's form from a real `swarm serve`.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tokenizer } from '../../src/model/tokenizer/index.js';
import { packageRoot } from '../../src/native/addon.js';
import { AgentSequence } from '../../src/policy/agent-sequence.js';
import { PolicyError } from '../../src/policy/policy-error.js';
import { RemotePolicy } from '../../src/policy/remote-policy.js';
import { makeCheckpoint } from '../engine/helpers.js';
import { sglangStandIn } from '../serve/sglang-stand-in.js';
import { serve, type Served } from '../serve/serve-process.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 's3-remote-'));

let model: string;
const servers: Served[] = [];

beforeAll(async () => {
  model = makeCheckpoint('small', 5);
  servers.push(await serve(model), await serve(model));
}, 60_000);

afterAll(() => {
  for (const server of servers) server.child.kill('SIGKILL');
});

function evaluate(urls: string[], out: string): Promise<{ status: number | null; stderr: string }> {
  const args = [swarm, 'eval', '--server', urls.join(','), '--tokenizer', path.join(model, 'tokenizer.json'), '--task', 'aggregation-digits'];
  args.push('--sizes', '2', '--seeds', '1', '--problems', '3', '--allowance', '48', '--out', out);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    child.on('exit', (status: number | null) => resolve({ status, stderr }));
  });
}

/** The episodes and every trace file's bytes of an evaluation directory. */
function contents(dir: string): { episodes: string; traces: Record<string, string> } {
  const traces: Record<string, string> = {};
  const walk = (at: string): void => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name);
      if (entry.isDirectory()) walk(file);
      else traces[path.relative(dir, file)] = fs.readFileSync(file).toString('base64');
    }
  };
  walk(path.join(dir, 'traces'));
  return { episodes: fs.readFileSync(path.join(dir, 'episodes.jsonl'), 'utf8'), traces };
}

async function completionsAnswered(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^s3_http_requests_total\{endpoint="\/v1\/completions",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

describe('swarm eval --server', () => {
  it('gives the same episodes through one server, two, and two of which one dies mid-run', async () => {
    const one = tmp();
    const two = tmp();
    const failing = tmp();
    expect(await evaluate([servers[0].url], one)).toMatchObject({ status: 0 });
    expect(await evaluate([servers[0].url, servers[1].url], two)).toMatchObject({ status: 0 });

    const doomed = await serve(model);
    servers.push(doomed);
    const run = evaluate([doomed.url, servers[1].url], failing);
    let finished = false;
    void run.then(() => (finished = true));
    // Kill it once it has answered a few pieces, in the middle of the run.
    while ((await completionsAnswered(doomed.url).catch(() => 99)) < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(finished).toBe(false);
    doomed.child.kill('SIGKILL');
    const result = await run;
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);

    const reference = contents(one);
    expect(reference.episodes.split('\n').filter(Boolean)).toHaveLength(3);
    expect(contents(two)).toEqual(reference);
    expect(contents(failing)).toEqual(reference);
    const summary = JSON.parse(fs.readFileSync(path.join(one, 'summary.json'), 'utf8'));
    expect(summary.policy.name).toBe(path.basename(model));
    expect(summary.policy.description).toMatch(/inference server/);
  }, 180_000);

  it('keys a resume by the servers\' numerics, and refuses servers that sample with different ones', async () => {
    const bf16 = await serve(model, ['--kv-dtype', 'bf16']);
    servers.push(bf16);
    const mixed = await evaluate([servers[0].url, bf16.url], tmp());
    expect(mixed.status).not.toBe(0);
    expect(mixed.stderr).toMatch(/different numerics: .* with stored weights and a f32 KV cache, .* with stored weights and a bf16 KV cache/);

    const out = tmp();
    expect(await evaluate([servers[0].url], out)).toMatchObject({ status: 0 });
    const resumed = await evaluate([bf16.url], out);
    expect(resumed.status).not.toBe(0);
    expect(resumed.stderr).toMatch(/policyKey .*but this run asks for .*:kv=bf16/);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    expect(manifest.policy.description).toMatch(/stored weights, f32 KV cache/);
    // The same numerics resume: every episode is already there.
    expect(await evaluate([servers[1].url], out)).toMatchObject({ status: 0, stderr: '' });
  }, 180_000);

  it('runs one episode with swarm run --server', () => {
    const result = spawnSync(process.execPath, [swarm, 'run', '--server', servers[1].url, '--tokenizer', path.join(model, 'tokenizer.json'), '--task', 'aggregation-digits', '--n', '2', '--allowance', '24'], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/outcome: (success|failure)/);
    expect(spawnSync(process.execPath, [swarm, 'run', '--server', servers[1].url, '--task', 'aggregation-digits'], { encoding: 'utf8' }).stderr).toMatch(/needs --tokenizer FILE/);
  }, 60_000);

  it('needs --tokenizer, and refuses malformed server URLs', () => {
    const run = (args: string[]) => spawnSync(process.execPath, [swarm, 'eval', '--task', 'aggregation', '--out', tmp(), ...args], { encoding: 'utf8' });
    expect(run(['--server', servers[0].url]).stderr).toMatch(/--server needs --tokenizer FILE/);
    expect(run(['--server', 'localhost:8000', '--tokenizer', path.join(model, 'tokenizer.json')]).stderr).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
    expect(run(['--server', servers[0].url, '--model', model]).stderr).toMatch(/exactly one of --policy scripted, --model DIR and --server/);
  });
});

describe('RemotePolicy', () => {
  it('refuses a response whose prompt ids are not the history it sent, and draws from a vLLM server', async () => {
    const liar = http.createServer((request, response) => {
      response.setHeader('content-type', 'application/json');
      if (request.url === '/v1/models') {
        response.end(JSON.stringify({ object: 'list', data: [{ id: 'liar', object: 'model', max_model_len: 4096 }] }));
        return;
      }
      response.end(JSON.stringify({ choices: [{ token_ids: [5], prompt_token_ids: [1, 2, 3, 99], logprobs: { token_logprobs: [-1] }, finish_reason: 'length' }] }));
    });
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
    try {
      const tokenizer = Tokenizer.fromFile(path.join(model, 'tokenizer.json'));
      const sequence = new AgentSequence({ agentIndex: 0, agentName: 'agent_1', samplingSeed: 1n });
      sequence.appendContext({ tokens: [1, 2, 3, 4], roles: new Uint8Array(4), items: [] });
      const policy = await RemotePolicy.connect({ servers: [url], tokenizer });
      await expect(policy.generate(sequence, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 1 })).rejects.toThrow(
        /prompt_token_ids do not match the history sent \(4 tokens\)/,
      );
      const vllm = await RemotePolicy.connect({ servers: [url], tokenizer, protocol: 'vllm' });
      await expect(vllm.generate(sequence, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 1, draws: 2 })).rejects.toThrow(PolicyError);
    } finally {
      liar.close();
    }
  });
});

/**
 * A stand-in SGLang server (none runs here): it answers /generate in SGLang's form by asking a real
 * `swarm serve` for the same completion, so the client's request and its reading of the answer are
 * checked against real sampling. `lie` makes it report another prompt length.
 */
describe('RemotePolicy --protocol sglang (against a stand-in SGLang server)', () => {
  it('sends input_ids with SGLang sampling params and reads the same piece the server sampled', async () => {
    const standIn = await sglangStandIn(servers[0]!.url);
    try {
      const tokenizer = Tokenizer.fromFile(path.join(model, 'tokenizer.json'));
      const piece = async (policy: RemotePolicy) => {
        const sequence = new AgentSequence({ agentIndex: 0, agentName: 'agent_1', samplingSeed: 1n });
        sequence.appendContext({ tokens: [1, 2, 3, 4, 5], roles: new Uint8Array(5), items: [] });
        return policy.generate(sequence, { maxNew: 12, stopTokenIds: [7], temperature: 1, seed: 12345 });
      };
      const direct = await piece(await RemotePolicy.connect({ servers: [servers[0]!.url], tokenizer }));
      const sglang = await piece(await RemotePolicy.connect({ servers: [standIn.url], tokenizer, protocol: 'sglang' }));
      expect(direct.tokens.length).toBeGreaterThan(0);
      expect(sglang.tokens).toEqual(direct.tokens);
      expect(sglang.logprobs).toEqual(direct.logprobs);
      expect(sglang.finish).toBe(direct.finish);
      expect(standIn.seen[0]).toEqual({ endpoint: '/generate', body: {
        input_ids: [1, 2, 3, 4, 5],
        sampling_params: { max_new_tokens: 12, temperature: 1, stop_token_ids: [7], sampling_seed: 12345, skip_special_tokens: false, no_stop_trim: true },
        return_logprob: true,
        logprob_start_len: -1,
      } });
    } finally {
      standIn.close();
    }
  });

  it('refuses an answer for another prompt than the history sent', async () => {
    const liar = await sglangStandIn(servers[0]!.url, { lie: true });
    try {
      const tokenizer = Tokenizer.fromFile(path.join(model, 'tokenizer.json'));
      const sequence = new AgentSequence({ agentIndex: 0, agentName: 'agent_1', samplingSeed: 1n });
      sequence.appendContext({ tokens: [1, 2, 3], roles: new Uint8Array(3), items: [] });
      const policy = await RemotePolicy.connect({ servers: [liar.url], tokenizer, protocol: 'sglang' });
      await expect(policy.generate(sequence, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 1 })).rejects.toThrow(/prompt_tokens is 4 but the history sent has 3 tokens/);
    } finally {
      liar.close();
    }
  });
});
