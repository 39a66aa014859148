// `swarm serve` as a user runs it (a child process on loopback) against the official `openai` client
// and plain fetch: token-in/token-out completions equal to a reference computed one token at a time
// from full-sequence logits, the same tokens whatever runs beside them, every bad input a 4xx with an
// OpenAI-style error body while other requests go on, weights reloaded mid-traffic (from a folder, and
// over a weight link), /v1/models,
// /health, /metrics, and a graceful SIGTERM that still answers the request in flight.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import OpenAI from 'openai';
import { packageRoot } from '../../src/native/addon.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Qwen3Model } from '../../src/native/model.js';
import { WeightsSnapshot } from '../../src/native/weights-snapshot.js';
import { ServerWeightLinks } from '../../src/policy/server-weight-links.js';
import { makeCheckpoint, prompt, referencePiece } from '../engine/helpers.js';
import { serve, type Served } from './serve-process.js';

type Choice = { token_ids: number[]; prompt_token_ids?: number[]; logprobs: { token_logprobs: number[] } | null; s3_policy_version: number; s3_finish: string; s3_draws?: { tokens: number[][]; logprobs: number[][] } };

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

let model: string;
let other: string;
let small: string;
let server: Served;
let client: OpenAI;
let vocab: number;

beforeAll(async () => {
  model = makeCheckpoint('tiny', 3);
  other = makeCheckpoint('tiny', 4);
  small = makeCheckpoint('small', 5);
  server = await serve(model);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  vocab = Number(server.start.vocabSize);
}, 60_000);

afterAll(async () => {
  server?.child.kill('SIGKILL');
});

describe('swarm serve with the openai client', () => {
  it('completes token ids as the one-token-at-a-time reference does, with log-probs, draws and the weights version', async () => {
    const ids = prompt(40, 1, vocab);
    const completion = await client.completions.create({
      model: 'ignored-name',
      prompt: ids,
      max_tokens: 12,
      temperature: 1,
      seed: 1234,
      logprobs: 1,
      // Extensions the openai package passes through: vLLM's token ids and our draws.
      return_token_ids: true,
      s3_draws: 3,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    const choice = completion.choices[0] as unknown as Choice;
    const reference = referencePiece(Qwen3Model.load(model), ids, { maxNew: 12, temperature: 1, seed: 1234n, draws: 3 });
    expect(choice.token_ids).toEqual(reference.tokens);
    expect(choice.prompt_token_ids).toEqual(ids);
    choice.logprobs!.token_logprobs.forEach((logprob, i) => expect(logprob).toBeCloseTo(reference.logprobs[i], 4));
    expect(choice.s3_draws!.tokens.flat()).toEqual(reference.drawTokens);
    expect(choice.s3_draws!.tokens.every((row) => row.length === 3)).toBe(true);
    expect(choice.s3_policy_version).toBe(0);
    expect(completion.usage).toEqual({ prompt_tokens: 40, completion_tokens: reference.tokens.length, total_tokens: 40 + reference.tokens.length });
    expect(completion.model).toBe('ignored-name');
    expect(typeof completion.choices[0].text).toBe('string');
  }, 60_000);

  it('gives the same tokens for the same seed whatever other requests run beside it', async () => {
    const ids = prompt(64, 2, vocab);
    const ask = (seed: number, tokens: number[]) =>
      client.completions.create({ model: 'm', prompt: tokens, max_tokens: 16, seed, return_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming);
    const alone = ((await ask(7, ids)).choices[0] as unknown as Choice).token_ids;
    const crowd = await Promise.all([ask(7, ids), ...Array.from({ length: 7 }, (_, i) => ask(100 + i, prompt(30 + 9 * i, 10 + i, vocab))), ask(7, ids)]);
    expect((crowd[0].choices[0] as unknown as Choice).token_ids).toEqual(alone);
    expect((crowd[8].choices[0] as unknown as Choice).token_ids).toEqual(alone);
    // A list of prompts is one choice each, in order, computed the same way.
    const both = await client.completions.create({ model: 'm', prompt: [ids, prompt(20, 3, vocab)], max_tokens: 16, seed: 7, return_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(both.choices.map((c) => c.index)).toEqual([0, 1]);
    expect((both.choices[0] as unknown as Choice).token_ids).toEqual(alone);
  }, 60_000);

  it('refuses bad input with a 4xx and an OpenAI-style error naming the field, and keeps serving', async () => {
    const refused = async (body: Record<string, unknown>): Promise<InstanceType<typeof OpenAI.APIError>> => {
      try {
        await client.completions.create({ model: 'm', max_tokens: 4, ...body } as unknown as OpenAI.CompletionCreateParamsNonStreaming);
      } catch (error) {
        return error as InstanceType<typeof OpenAI.APIError>;
      }
      throw new Error(`accepted ${JSON.stringify(body)}`);
    };
    const outside = await refused({ prompt: [1, 2, vocab + 5] });
    expect(outside.status).toBe(400);
    expect(outside.message).toMatch(new RegExp(`prompt\\[2\\] must be a token id from 0 to ${vocab - 1}`));
    expect((outside.error as { param: string }).param).toBe('prompt');
    const long = await refused({ prompt: prompt(10, 1, vocab), max_tokens: Number(server.start.maxContext) });
    expect(long.status).toBe(400);
    expect(long.code).toBe('context_length_exceeded');
    expect((await refused({ prompt: 'hello' })).message).toMatch(/token-in\/token-out/);
    expect((await refused({ prompt: [1, 2], stop: ['\n'] })).message).toMatch(/use stop_token_ids/);
    expect((await refused({ prompt: [1, 2], n: 2 })).message).toMatch(/n must be 1/);
    expect((await refused({ prompt: [1, 2], temperature: -1 })).message).toMatch(/temperature must be a finite number ≥ 0/);
    expect((await refused({ prompt: [1, 2], logprobs: 5 })).message).toMatch(/top alternatives are not returned/);
    expect((await refused({ prompt: [1, 2], seed: -3 })).message).toMatch(/seed must be an integer from 0 to 2\^64/);

    const malformed = await post(`${server.url}/v1/completions`, '{"prompt": [1, 2');
    expect(malformed.status).toBe(400);
    expect(malformed.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    const missing = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(404);
    const wrongMethod = await fetch(`${server.url}/v1/completions`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    // Still serving.
    const after = await client.completions.create({ model: 'm', prompt: [5, 6, 7], max_tokens: 2, seed: 1 });
    expect(after.choices).toHaveLength(1);
  }, 60_000);

  it('lists its model, reports health and Prometheus metrics', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([path.basename(model)]);
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health).toMatchObject({ status: 'ok', weightsVersion: 0 });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^# TYPE s3_generated_tokens_total counter$/m);
    expect(Number(/^s3_generated_tokens_total (\d+)$/m.exec(metrics)![1])).toBeGreaterThan(0);
    expect(metrics).toMatch(/^s3_http_requests_total\{endpoint="\/v1\/completions",status="200"\} \d+$/m);
    expect(metrics).toMatch(/^s3_http_requests_total\{endpoint="\/v1\/completions",status="400"\} \d+$/m);
    expect(metrics).toMatch(/^s3_kv_blocks_total \d+$/m);
  });

  it('loads new weights while a request runs, without dropping it; later pieces report the new version', async () => {
    const ids = prompt(48, 5, vocab);
    const running = client.completions.create({ model: 'm', prompt: ids, max_tokens: 64, seed: 3, return_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming);
    const loaded = await post(`${server.url}/v1/load_weights`, { path: other });
    expect(loaded.status).toBe(200);
    expect(loaded.json.weightsVersion).toBe(1);
    const first = (await running).choices[0] as unknown as Choice;
    expect([0, 1]).toContain(first.s3_policy_version);
    expect(first.token_ids.length).toBeGreaterThan(0);
    const next = (await client.completions.create({ model: 'm', prompt: ids, max_tokens: 8, seed: 3, return_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming)).choices[0] as unknown as Choice;
    expect(next.s3_policy_version).toBe(1);
    expect(next.token_ids).toEqual(referencePiece(Qwen3Model.load(other), ids, { maxNew: 8, temperature: 1, seed: 3n }).tokens);
    const bad = await post(`${server.url}/v1/load_weights`, { path: path.join(other, 'no-such-folder') });
    expect(bad.status).toBe(400);
    expect(bad.json.error.param).toBe('path');
    expect((await (await fetch(`${server.url}/health`)).json()).weightsVersion).toBe(1);
  }, 60_000);

  it('takes weights over a TCP weight link while a request runs; refuses bad link requests and another shape, and keeps serving', async () => {
    const linkError = async (body: unknown, endpoint = '/v1/weight_link') => (await post(`${server.url}${endpoint}`, body)).json.error;
    expect(await linkError({})).toMatchObject({ param: 'transport', type: 'invalid_request_error' });
    expect(await linkError({ transport: 'tcp' })).toMatchObject({ param: 'port' });
    expect(await linkError({ transport: 'tcp', port: 9, timeoutMs: 5 })).toMatchObject({ param: 'timeoutMs' });
    expect(await linkError({ transport: 'nccl', id: 'c2hvcnQ=' })).toMatchObject({ param: 'id' });
    const early = await post(`${server.url}/v1/weight_link/receive`, {});
    expect(early.status).toBe(409);
    expect(early.json.error.code).toBe('no_weight_link');
    expect((await fetch(`${server.url}/v1/weight_link`)).status).toBe(405);

    const links = new ServerWeightLinks('tcp', 20_000);
    try {
      // Another shape: refused before the payload, by the server and here; the server keeps its weights.
      const refused = await links.send(server.url, WeightsSnapshot.ofCheckpoint(small)).then(
        () => null,
        (error: Error) => error.message,
      );
      expect(refused).toMatch(/the sender's model is \{hidden .*; this engine's is \{hidden/);
      expect((await (await fetch(`${server.url}/health`)).json()).weightsVersion).toBe(1);

      const ids = prompt(48, 6, vocab);
      const running = client.completions.create({ model: 'm', prompt: ids, max_tokens: 64, seed: 4, return_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming);
      expect(await links.send(server.url, WeightsSnapshot.ofCheckpoint(model))).toBe(2);
      const first = (await running).choices[0] as unknown as Choice;
      expect([1, 2]).toContain(first.s3_policy_version);
      const next = (await client.completions.create({ model: 'm', prompt: ids, max_tokens: 8, seed: 3, return_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming)).choices[0] as unknown as Choice;
      expect(next.s3_policy_version).toBe(2);
      expect(next.token_ids).toEqual(referencePiece(Qwen3Model.load(model), ids, { maxNew: 8, temperature: 1, seed: 3n }).tokens);
      const health = await (await fetch(`${server.url}/health`)).json();
      expect(health.weightLink).toMatchObject({ transport: 'tcp', state: 'ready', received: 1 });
    } finally {
      links.close();
    }
  }, 60_000);
});

describe('swarm bench serve', () => {
  it('times the HTTP path beside the in-process engine and checks both give the same tokens', () => {
    const result = spawnSync(process.execPath, [path.join(packageRoot, 'bin', 'swarm.js'), 'bench', 'serve', '--model', model, '--agents', '4', '--history', '24', '--piece', '8', '--rounds', '2', '--json'], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    const r = JSON.parse(result.stdout);
    expect(r.sameTokens).toBe(true);
    expect(r.inProcess.wallSeconds).toHaveLength(2);
    expect(r.http.tokensPerSecond).toBeGreaterThan(0);
    expect(r.ratio).toBeCloseTo(r.http.medianWallSeconds / r.inProcess.medianWallSeconds, 10);
  }, 60_000);
});

describe('swarm serve limits and shutdown', () => {
  it('sizes its KV cache for the device (1 GiB on the CPU) unless --kv-cache-mb says', async () => {
    // tiny, f32 cache: 2 layers × 2 KV heads × 16 dims × (key, value) × 4 bytes × 16 positions = 8,192 bytes a block.
    const blocks = async (url: string) => Number(/^s3_kv_blocks_total (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())![1]);
    expect(await blocks(server.url)).toBe(2 ** 30 / 8192);
    const sized = await serve(model, ['--kv-cache-mb', '2', '--max-sequences', '3']);
    try {
      expect(await blocks(sized.url)).toBe((2 * 2 ** 20) / 8192);
    } finally {
      sized.child.kill('SIGKILL');
    }
  }, 60_000);

  it('answers requests past --max-concurrent with 429, and finishes the one in flight on SIGTERM', async () => {
    const limited = await serve(model, ['--max-concurrent', '1']);
    try {
      const body = { prompt: prompt(32, 9, vocab), max_tokens: 200, seed: 1 };
      const results = await Promise.all([0, 1, 2].map(() => post(`${limited.url}/v1/completions`, body)));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses[0]).toBe(200);
      expect(statuses).toContain(429);
      expect(results.find((r) => r.status === 429)!.json.error.type).toBe('rate_limit_error');

      const inFlight = post(`${limited.url}/v1/completions`, body);
      await new Promise((resolve) => setTimeout(resolve, 50));
      limited.child.kill('SIGTERM');
      const answered = await inFlight;
      expect(answered.status).toBe(200);
      expect(answered.json.choices[0].finish_reason).toBe('length');
      expect(await limited.exited).toBe(0);
    } finally {
      limited.child.kill('SIGKILL');
    }
  }, 60_000);
});
