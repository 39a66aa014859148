// `swarm serve`: the native inference engine behind an OpenAI-compatible HTTP API, token-in/token-out
// as vLLM serves it (docs/serve.md). Each completion prompt becomes an engine sequence for the length
// of the request; the engine's automatic prefix caching makes re-sending an agent's whole history
// cheap, and sampling keyed by (seed, token position) makes a completion the same whatever else runs
// beside it. Weights are swapped between batches without dropping requests, from a folder
// (`POST /v1/load_weights`) or sent by the trainer over a weight link (`POST /v1/weight_link`, then
// `POST /v1/weight_link/receive` per version; weight-link-receiver.ts); every choice says which
// weights version produced it. Bad input is a 4xx with an OpenAI-style error
// body and never disturbs other requests; close() stops accepting and lets in-flight requests finish.

import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Tokenizer } from '../model/tokenizer/tokenizer.js';
import type { WeightFormat } from '../native/device.js';
import type { InferenceEngine } from '../native/engine.js';
import { parseCompletionRequest, type CompletionLimits, type CompletionRequest } from './completion-request.js';
import { badRequest, HttpError } from './http-error.js';
import { prometheusText } from './prometheus.js';
import { parseWeightLinkRequest, ringAddress, WeightLinkReceiver } from './weight-link-receiver.js';

/** How to serve. */
export interface InferenceServerOptions {
  /** The engine to serve (the server does not close it). */
  readonly engine: InferenceEngine;
  /** The model id `/v1/models` lists and responses name. */
  readonly modelName: string;
  /** Requests answered at once; more are refused with 429 (default 4 × the engine's sequences). */
  readonly maxConcurrentRequests?: number;
  /** Largest request body in bytes (default 64 MiB); larger ones get 413. */
  readonly maxBodyBytes?: number;
  /** Decodes completions into each choice's `text` (the checkpoint's tokenizer); without it `text` is empty. */
  readonly tokenizer?: Tokenizer;
  /** The weight format the engine loads with (reported by /health; default 'stored'). */
  readonly weights?: WeightFormat;
}

/** One choice of a completion response. */
interface CompletionChoice {
  index: number;
  text: string;
  finish_reason: 'stop' | 'length';
  logprobs: { tokens: string[]; token_logprobs: number[]; top_logprobs: null; text_offset: number[] } | null;
  token_ids?: number[];
  prompt_token_ids?: number[];
  s3_finish: 'stop' | 'length' | 'context' | 'cancelled';
  s3_policy_version: number;
  s3_draws?: { tokens: number[][]; logprobs: number[][] };
}

const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Prompts one request may carry. */
const MAX_PROMPTS = 256;
/** Extra draws per position (the paper's K = 32 and room above it). */
const MAX_DRAWS = 64;

function randomSeed(): bigint {
  return randomBytes(8).readBigUInt64BE();
}

/** The HTTP server; listen() starts it, close() drains it. */
export class InferenceServer {
  private readonly engine: InferenceEngine;
  private readonly modelName: string;
  private readonly maxConcurrent: number;
  private readonly maxBodyBytes: number;
  private readonly tokenizer: Tokenizer | null;
  private readonly weights: WeightFormat;
  private readonly limits: CompletionLimits;
  private readonly server: http.Server;
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly requests = new Map<string, number>();
  private inFlight = 0;
  private promptTokens = 0;
  private completionTokens = 0;
  private closing = false;
  private drained: (() => void) | null = null;
  private listenHost = '127.0.0.1';
  private readonly weightLink = new WeightLinkReceiver(() => this.listenHost);

  constructor(options: InferenceServerOptions) {
    this.engine = options.engine;
    this.modelName = options.modelName;
    const stats = this.engine.stats();
    this.maxConcurrent = options.maxConcurrentRequests ?? 4 * stats.maxSequences;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.tokenizer = options.tokenizer ?? null;
    this.weights = options.weights ?? 'stored';
    this.limits = { vocabSize: stats.vocabSize, maxContext: stats.maxContext, maxPrompts: MAX_PROMPTS, maxDraws: MAX_DRAWS };
    this.server = http.createServer((request, response) => {
      void this.handle(request, response);
    });
  }

  /** Starts listening; resolves with the bound address (port 0 picks a free port). */
  listen(port: number, host = '127.0.0.1'): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address() as AddressInfo;
        this.listenHost = address.address;
        resolve({ host: address.address, port: address.port });
      });
    });
  }

  /** Stops accepting connections, answers new requests 503, and resolves once in-flight requests are answered. */
  async close(): Promise<void> {
    this.closing = true;
    this.weightLink.close();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.server.closeAllConnections();
    await closed;
  }

  private count(endpoint: string, status: number): void {
    const key = `${endpoint} ${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  private send(response: http.ServerResponse, endpoint: string, status: number, body: unknown, contentType = 'application/json'): void {
    this.count(endpoint, status);
    const text = contentType === 'application/json' ? JSON.stringify(body) : String(body);
    response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
    response.end(text);
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const endpoint = url.pathname;
    this.inFlight += 1;
    try {
      if (this.closing) throw new HttpError(503, 'The server is shutting down.');
      const body = await this.route(request, response, endpoint);
      if (body !== undefined) {
        if (typeof body === 'string') this.send(response, endpoint, 200, body, 'text/plain; version=0.0.4');
        else this.send(response, endpoint, 200, body);
      }
    } catch (error) {
      const failure = error instanceof HttpError ? error : new HttpError(500, `Internal error: ${(error as Error).message}`);
      if (!response.headersSent) this.send(response, endpoint, failure.status, failure.body());
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0 && this.drained !== null) this.drained();
    }
  }

  private async route(request: http.IncomingMessage, response: http.ServerResponse, endpoint: string): Promise<unknown> {
    const method = request.method ?? 'GET';
    const allow = (methods: string): void => {
      if (!methods.split(',').includes(method)) {
        response.setHeader('allow', methods);
        throw new HttpError(405, `${endpoint} takes ${methods}, not ${method}.`);
      }
    };
    switch (endpoint) {
      case '/health':
        allow('GET');
      {
        const stats = this.engine.stats();
        return {
          status: 'ok',
          model: this.modelName,
          weightsVersion: stats.policyVersion,
          weights: this.weights,
          kvCacheDtype: stats.kvCacheDtype,
          device: stats.device,
          weightLink: this.weightLink.status(),
        };
      }
      case '/v1/models':
        allow('GET');
        return { object: 'list', data: [{ id: this.modelName, object: 'model', created: this.created, owned_by: 's3-swarm', max_model_len: this.limits.maxContext }] };
      case '/metrics':
        allow('GET');
        return prometheusText(this.engine.stats(), { inFlight: this.inFlight, requests: this.requests, promptTokens: this.promptTokens, completionTokens: this.completionTokens });
      case '/v1/completions': {
        allow('POST');
        if (this.inFlight > this.maxConcurrent) {
          throw new HttpError(429, `The server is answering ${this.maxConcurrent} requests already (--max-concurrent); retry later.`, null, 'too_many_requests');
        }
        const completion = parseCompletionRequest(await readJson(request, this.maxBodyBytes), this.limits);
        return this.complete(completion, request, response);
      }
      case '/v1/load_weights': {
        allow('POST');
        const body = await readJson(request, this.maxBodyBytes);
        const folder = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).path : undefined;
        if (typeof folder !== 'string' || folder === '') throw badRequest('path', `path must name a checkpoint folder (config.json and safetensors), got ${JSON.stringify(folder) ?? 'nothing'}.`);
        let version: number;
        try {
          version = this.engine.loadWeights(path.resolve(folder));
        } catch (error) {
          throw badRequest('path', (error as Error).message, 'weights_not_loaded');
        }
        return { weightsVersion: version, path: path.resolve(folder) };
      }
      case '/v1/weight_link':
        allow('POST,DELETE');
        if (request.method === 'DELETE') {
          this.weightLink.close();
          return { closed: true };
        }
        return { ...this.weightLink.open(parseWeightLinkRequest(await readJson(request, this.maxBodyBytes)), ringAddress(request.socket.remoteAddress)) };
      case '/v1/weight_link/receive':
        allow('POST');
        return this.weightLink.receive(this.engine);
      default:
        throw new HttpError(
          404,
          `No endpoint ${endpoint}; this server has POST /v1/completions, POST /v1/load_weights, POST|DELETE /v1/weight_link, POST /v1/weight_link/receive, GET /v1/models, /health and /metrics.`,
        );
    }
  }

  private async complete(completion: CompletionRequest, request: http.IncomingMessage, response: http.ServerResponse): Promise<unknown> {
    // A client that goes away cancels its pieces; the engine frees their slots.
    const abort = new AbortController();
    const onClose = (): void => {
      if (!response.writableEnded) abort.abort();
    };
    response.on('close', onClose);
    const seed = completion.seed ?? randomSeed();
    try {
      const choices = await Promise.all(completion.prompts.map((prompt, index) => this.choice(completion, prompt, index, seed, abort.signal)));
      if (abort.signal.aborted) return undefined;
      const completionTokens = choices.reduce((total, choice) => total + (choice.token_ids?.length ?? 0), 0);
      const promptTokens = completion.prompts.reduce((total, prompt) => total + prompt.length, 0);
      this.promptTokens += promptTokens;
      this.completionTokens += completionTokens;
      for (const choice of choices) if (!completion.returnTokenIds) delete (choice as Partial<CompletionChoice>).token_ids;
      return {
        id: `cmpl-${randomBytes(12).toString('hex')}`,
        object: 'text_completion',
        created: Math.floor(Date.now() / 1000),
        model: completion.model ?? this.modelName,
        choices,
        usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
        s3_seed: seed.toString(),
      };
    } finally {
      response.off('close', onClose);
    }
  }

  /** The text of sampled tokens; ids the tokenizer has no text for (embedding padding rows) decode to nothing. */
  private decode(ids: readonly number[]): string {
    if (this.tokenizer === null) return '';
    try {
      return this.tokenizer.decode(ids);
    } catch {
      return ids.map((id) => this.tokenText(id)).join('');
    }
  }

  /** A token as logprobs.tokens shows it: its decoded text ("" for padding ids), or "token_id:ID" (vLLM's form) without a tokenizer. */
  private tokenText(id: number): string {
    if (this.tokenizer === null) return `token_id:${id}`;
    try {
      return this.tokenizer.decode([id]);
    } catch {
      return '';
    }
  }

  /** Where each token's text starts: the summed lengths of the tokens' own texts before it (0s without a tokenizer). */
  private textOffsets(texts: readonly string[]): number[] {
    let offset = 0;
    return texts.map((text) => {
      const start = offset;
      offset += this.tokenizer === null ? 0 : text.length;
      return start;
    });
  }

  private async choice(completion: CompletionRequest, prompt: readonly number[], index: number, seed: bigint, signal: AbortSignal): Promise<CompletionChoice> {
    const sequence = this.engine.openSequence();
    try {
      this.engine.append(sequence, prompt);
      const piece = await this.engine.generate(sequence, {
        maxNew: completion.maxTokens,
        stopTokenIds: completion.stopTokenIds,
        temperature: completion.temperature,
        seed,
        draws: completion.draws,
        signal,
      });
      const k = completion.draws;
      const texts = completion.logprobs ? piece.tokens.map((id) => this.tokenText(id)) : [];
      const choice: CompletionChoice = {
        index,
        text: this.decode(piece.tokens),
        finish_reason: piece.finish === 'stop' ? 'stop' : 'length',
        logprobs: completion.logprobs
          ? { tokens: texts, token_logprobs: piece.logprobs, top_logprobs: null, text_offset: this.textOffsets(texts) }
          : null,
        token_ids: piece.tokens,
        ...(completion.returnTokenIds ? { prompt_token_ids: [...prompt] } : {}),
        s3_finish: piece.finish,
        s3_policy_version: piece.policyVersion,
      };
      if (k > 0 && piece.draws !== undefined) {
        const draws = piece.draws;
        choice.s3_draws = {
          tokens: piece.tokens.map((_, position) => Array.from(draws.tokens.subarray(position * k, (position + 1) * k))),
          logprobs: piece.tokens.map((_, position) => Array.from(draws.logprobs.subarray(position * k, (position + 1) * k))),
        };
      }
      return choice;
    } finally {
      this.engine.release(sequence);
    }
  }
}

/** Reads and parses a JSON body; 413 past the limit, 400 for malformed JSON. */
async function readJson(request: http.IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `The request body exceeds ${limit} bytes.`, 'body', 'request_too_large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest('body', `The request body is not valid JSON: ${(error as Error).message}.`, 'invalid_json');
  }
}
