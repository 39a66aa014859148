// RemotePolicy: the harness's Policy on inference servers token-in/token-out — ours (`swarm serve`)
// or vLLM on the OpenAI-compatible completions API (token-id prompts, `return_token_ids`), or SGLang
// on its native /generate (`input_ids`, `return_logprob`; its /v1/models names the model). Each piece is one completion of the agent's whole history (the servers'
// prefix caches make re-sending it cheap); the tokens the server sampled are the ones kept, and a
// response that does not extend the history it was sent is an error, never re-tokenized.
//
// Several servers: an agent's sequence sticks to one server (for its prefix cache), new sequences go
// to the server with the fewest requests out; connection failures, timeouts, 429 and 5xx are retried
// with backoff, then the sequence moves to another server, so a server that dies loses nothing. Which
// server answers, and when, changes no result: pieces reach the harness through a TurnClock in the
// order an engine stepping one token per step would finish them (turn-clock.ts), and sampling is
// keyed by (seed, position) on the server, so the same seeds give the same episodes whatever the
// number, speed or order of the servers.
//
// Weights versions: install() loads a folder on one server (server-weights.ts) and records what the
// server will report for it. Ours and SGLang report a version on every piece, mapped back to the
// caller's; a version never installed there means the server restarted, and it is given the current
// weights again (`reinstall`) before it samples more. vLLM reports none: its requests wait while a
// load is under way, the load waits for the requests already out, and each piece carries the version
// installed when it was sent; a vLLM server that dropped a connection is reinstalled before it is
// used again, in case it restarted.

import type { Tokenizer } from '../model/tokenizer/tokenizer.js';
import type { AgentSequence } from './agent-sequence.js';
import type { GenerateOptions, GenerateResult, Policy } from './policy.js';
import { PolicyError } from './policy-error.js';
import { TurnClock } from './turn-clock.js';
import type { ServerWeightsVersion } from './server-weights.js';

/** Which API a server speaks: ours (`swarm serve`, with draws and weights versions), vLLM's completions, or SGLang's /generate. */
export type RemoteProtocol = 's3' | 'vllm' | 'sglang';

/** Every protocol, in the order the CLI lists them. */
export const REMOTE_PROTOCOLS: readonly RemoteProtocol[] = ['s3', 'vllm', 'sglang'];

/** How to reach the servers. */
export interface RemotePolicyOptions {
  /** Base URLs, e.g. "http://10.0.0.2:8000" (the "/v1" is added). */
  readonly servers: readonly string[];
  /** The tokenizer of the served model (the harness renders context with it). */
  readonly tokenizer: Tokenizer;
  /** Default 's3'. */
  readonly protocol?: RemoteProtocol;
  /** Attempts per server before a sequence moves on (default 4). */
  readonly attempts?: number;
  /** First retry delay in ms, doubled per attempt up to 2 s (default 100). */
  readonly retryDelayMs?: number;
  /** A request taking longer is retried elsewhere (default 600 s). */
  readonly requestTimeoutMs?: number;
}

/** What /v1/models says about a server. */
export interface RemoteServerInfo {
  readonly url: string;
  readonly model: string;
  readonly maxContext: number;
}

interface ServerState {
  readonly url: string;
  out: number;
  downUntil: number;
  /** Server weights version → the caller's version (install); empty until the caller installs weights. */
  readonly versions: Map<number | string, number>;
  /** The caller's version installed last (undefined until install). */
  installed: number | undefined;
  /** A load under way (install); vLLM requests wait for it. */
  loading: Promise<void> | null;
  /** Resolved when `out` drops to 0 (install on vLLM waits for them). */
  idle: (() => void)[];
  /** vLLM only: a connection to it failed, so it may have restarted on its startup weights. */
  suspect: boolean;
}

/** One answered piece before the clock cuts it. */
interface RemotePiece {
  readonly tokens: number[];
  readonly logprobs: number[];
  readonly drawTokens: number[][] | null;
  readonly drawLogprobs: number[][] | null;
  readonly finish: GenerateResult['finish'];
  readonly policyVersion: number | undefined;
}

/** What a server's answer says before versions are mapped: the piece and the server version it reports (undefined: none). */
interface AnsweredPiece extends Omit<RemotePiece, 'policyVersion'> {
  readonly reported: number | string | undefined;
}

/** An error worth retrying (the server may answer next time or another server will). */
class RetryableError extends Error {
  /** The connection itself failed (refused, reset, timed out), not an HTTP status. */
  readonly connection: boolean;
  constructor(message: string, connection = false) {
    super(message);
    this.connection = connection;
  }
}

/** A server answered with weights the caller never installed there (it restarted): reload it, then retry. */
class StaleServerError extends Error {}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function trimmed(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** Reads /v1/models of a server: the model it serves and its context. */
export async function describeServer(url: string, timeoutMs = 10_000): Promise<RemoteServerInfo> {
  const base = trimmed(url);
  let body: unknown;
  try {
    const response = await fetch(`${base}/v1/models`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    body = await response.json();
  } catch (error) {
    throw new PolicyError(`inference server ${base}: GET /v1/models failed (${(error as Error).message}); is it running?`);
  }
  const first = isRecord(body) && Array.isArray(body.data) && isRecord(body.data[0]) ? body.data[0] : null;
  if (first === null || typeof first.id !== 'string') throw new PolicyError(`inference server ${base}: /v1/models lists no model`);
  const maxContext = typeof first.max_model_len === 'number' ? first.max_model_len : Number.POSITIVE_INFINITY;
  return { url: base, model: first.id, maxContext };
}

/** A Policy served by remote inference servers. */
export class RemotePolicy implements Policy {
  readonly tokenizer: Tokenizer;
  /** The model the servers serve (the same on every server). */
  readonly model: string;
  private readonly protocol: RemoteProtocol;
  private readonly servers: ServerState[];
  private readonly maxContext: number;
  private readonly attempts: number;
  private readonly retryDelayMs: number;
  private readonly requestTimeoutMs: number;
  private readonly routes = new WeakMap<AgentSequence, ServerState>();
  private readonly clock = new TurnClock();
  private delivered = 0;
  /** Called with a server's URL when it answers with weights never installed there; reinstalls the current ones. */
  reinstall: ((url: string) => Promise<void>) | null = null;

  private constructor(options: RemotePolicyOptions, infos: readonly RemoteServerInfo[]) {
    this.tokenizer = options.tokenizer;
    this.protocol = options.protocol ?? 's3';
    this.servers = infos.map((info) => ({ url: info.url, out: 0, downUntil: 0, versions: new Map<number | string, number>(), installed: undefined, loading: null, idle: [], suspect: false }));
    this.model = infos[0].model;
    this.maxContext = Math.min(...infos.map((info) => info.maxContext));
    this.attempts = options.attempts ?? 4;
    this.retryDelayMs = options.retryDelayMs ?? 100;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 600_000;
  }

  /** Asks every server what it serves; refuses servers that serve different models. */
  static async connect(options: RemotePolicyOptions): Promise<RemotePolicy> {
    if (options.servers.length === 0) throw new PolicyError('RemotePolicy needs at least one server URL');
    const infos = await Promise.all(options.servers.map((url) => describeServer(url)));
    const models = [...new Set(infos.map((info) => info.model))];
    if (models.length > 1) {
      throw new PolicyError(`the inference servers serve different models (${infos.map((i) => `${i.url}: ${i.model}`).join(', ')}); one policy needs one model`);
    }
    return new RemotePolicy(options, infos);
  }

  /** The servers' base URLs. */
  get urls(): string[] {
    return this.servers.map((server) => server.url);
  }

  /** Tokens handed to the harness so far (the sampled tokens of every delivered piece). */
  get generatedTokens(): number {
    return this.delivered;
  }

  /** The API the servers speak. */
  get serverProtocol(): RemoteProtocol {
    return this.protocol;
  }

  /**
   * Loads the caller's weights `version` on the server at `url` with `load` (server-weights.ts), which
   * resolves with the version the server will report for them (null: none, vLLM). One load at a time
   * per server; on vLLM the load waits for the requests out there and new ones wait for the load, so
   * no piece straddles it. From the first install on, pieces carry the caller's versions.
   */
  async install(url: string, version: number, load: () => Promise<ServerWeightsVersion>): Promise<void> {
    const server = this.servers.find((s) => s.url === trimmed(url));
    if (server === undefined) throw new PolicyError(`RemotePolicy: ${url} is not one of its servers (${this.urls.join(', ')})`);
    while (server.loading !== null) await server.loading;
    let done = (): void => {};
    server.loading = new Promise<void>((resolve) => (done = resolve));
    try {
      if (this.protocol === 'vllm' && server.out > 0) await new Promise<void>((resolve) => server.idle.push(resolve));
      const reported = await load();
      if (reported !== null) server.versions.set(reported, version);
      server.installed = version;
      server.suspect = false;
    } finally {
      server.loading = null;
      done();
    }
  }

  async generate(sequence: AgentSequence, options: GenerateOptions): Promise<GenerateResult> {
    if (sequence.length >= this.maxContext) return { tokens: [], logprobs: [], finish: 'context' };
    const draws = options.draws ?? 0;
    if (draws > 0 && this.protocol !== 's3') throw new PolicyError(`RemotePolicy: ${draws} extra draws per position need our server (swarm serve, protocol s3); ${this.protocol} servers return none`);
    const history = Array.from(sequence.tokens());
    const ticket = this.clock.issue();
    const http = new AbortController();
    return new Promise<GenerateResult>((resolve, reject) => {
      const signal = options.signal;
      const deliver = (piece: RemotePiece) => (finishAt: number) => {
        signal?.removeEventListener('abort', onAbort);
        const result = cut(piece, finishAt - ticket.issuedAt, draws);
        this.delivered += result.tokens.length;
        resolve(result);
      };
      const onAbort = (): void => {
        this.clock.cancel(ticket);
        // Cancelled in the turn it was issued: nothing was sampled, so the answer is not needed.
        if (this.clock.time === ticket.issuedAt) {
          http.abort();
          this.clock.arrive(ticket, 0, deliver({ tokens: [], logprobs: [], drawTokens: null, drawLogprobs: null, finish: 'cancelled', policyVersion: undefined }));
        }
      };
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      this.request(sequence, history, options, http.signal).then(
        (piece) => {
          if (!http.signal.aborted) this.clock.arrive(ticket, piece.tokens.length, deliver(piece));
        },
        (error: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          if (http.signal.aborted) return;
          this.clock.withdraw(ticket);
          reject(error);
        },
      );
    });
  }

  release(sequence: AgentSequence): void {
    this.routes.delete(sequence);
  }

  /** The server a sequence is on, or the least busy one that is up. */
  private route(sequence: AgentSequence, avoid: ServerState | null): ServerState {
    const current = this.routes.get(sequence);
    if (current !== undefined && current !== avoid) return current;
    const now = Date.now();
    const candidates = this.servers.filter((server) => server !== avoid);
    const up = candidates.filter((server) => server.downUntil <= now);
    const pool = up.length > 0 ? up : candidates.length > 0 ? candidates : this.servers;
    const chosen = pool.reduce((best, server) => (server.out < best.out ? server : best));
    this.routes.set(sequence, chosen);
    return chosen;
  }

  private async request(sequence: AgentSequence, history: number[], options: GenerateOptions, signal: AbortSignal): Promise<RemotePiece> {
    const failures: string[] = [];
    let avoid: ServerState | null = null;
    for (let hop = 0; hop < this.servers.length; hop += 1) {
      const server = this.route(sequence, avoid);
      for (let attempt = 0; attempt < this.attempts; attempt += 1) {
        if (signal.aborted) throw new PolicyError('cancelled');
        if (attempt > 0) await sleep(Math.min(2000, this.retryDelayMs * 2 ** (attempt - 1)));
        if (this.protocol === 'vllm') {
          while (server.loading !== null) await server.loading;
          if (server.suspect && server.installed !== undefined && this.reinstall !== null) {
            server.suspect = false;
            const reinstalled = await this.reinstall(server.url).then(
              () => true,
              (reason: Error) => (failures.push(`${server.url}: reinstalling failed: ${reason.message}`), (server.suspect = true), false),
            );
            if (!reinstalled) continue;
            while (server.loading !== null) await server.loading;
          }
        }
        server.out += 1;
        const sentWith = server.installed;
        try {
          const answered = await this.post(server, history, options, signal);
          const piece = this.versioned(server, answered, sentWith);
          server.downUntil = 0;
          return piece;
        } catch (error) {
          if (error instanceof StaleServerError && this.reinstall !== null && !signal.aborted) {
            failures.push(`${server.url}: ${error.message}`);
            await this.reinstall(server.url).catch((reason: Error) => failures.push(`${server.url}: reinstalling failed: ${reason.message}`));
            continue;
          }
          if (!(error instanceof RetryableError) || signal.aborted) throw error;
          if (error.connection && this.protocol === 'vllm') server.suspect = true;
          failures.push(`${server.url}: ${error.message}`);
        } finally {
          server.out -= 1;
          if (server.out === 0) for (const resolve of server.idle.splice(0)) resolve();
        }
      }
      server.downUntil = Date.now() + 5_000;
      avoid = server;
      this.routes.delete(sequence);
    }
    throw new PolicyError(`RemotePolicy: no inference server answered ${sequence.agentName}'s piece (${failures.slice(-3).join('; ')})`);
  }

  private body(history: number[], options: GenerateOptions): Record<string, unknown> {
    const seed = BigInt(options.seed);
    // Ours takes 64-bit seeds (as a decimal string beyond 2^53); vLLM takes a 63-bit integer.
    const sent = this.protocol === 's3' ? (seed <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seed) : seed.toString()) : Number(seed & ((1n << 53n) - 1n));
    return {
      model: this.model,
      prompt: history,
      max_tokens: options.maxNew,
      temperature: options.temperature,
      seed: sent,
      stop_token_ids: [...options.stopTokenIds],
      logprobs: 1,
      return_token_ids: true,
      ...(options.draws !== undefined && options.draws > 0 ? { s3_draws: options.draws } : {}),
      ...(this.protocol === 'vllm' ? { skip_special_tokens: false } : {}),
    };
  }

  /**
   * SGLang's /generate (python/sglang/srt/sampling/sampling_params.py): token ids in, the stop token
   * kept in the output (no_stop_trim), only the output's log-probs (logprob_start_len −1), a 53-bit
   * sampling_seed. Unverified against a real SGLang server (none runs here).
   */
  private sglangBody(history: number[], options: GenerateOptions): Record<string, unknown> {
    return {
      input_ids: history,
      sampling_params: {
        max_new_tokens: options.maxNew,
        temperature: options.temperature,
        stop_token_ids: [...options.stopTokenIds],
        sampling_seed: Number(BigInt(options.seed) & ((1n << 53n) - 1n)),
        skip_special_tokens: false,
        no_stop_trim: true,
      },
      return_logprob: true,
      logprob_start_len: -1,
    };
  }

  /** The piece with the caller's version: the server's report mapped (ours, SGLang), or the version installed when it was sent (vLLM). */
  private versioned(server: ServerState, answered: AnsweredPiece, sentWith: number | undefined): RemotePiece {
    const { reported, ...piece } = answered;
    if (this.protocol === 'vllm') return { ...piece, policyVersion: sentWith };
    if (server.versions.size === 0) return { ...piece, policyVersion: typeof reported === 'number' ? reported : undefined };
    const policyVersion = reported === undefined ? undefined : server.versions.get(reported);
    if (policyVersion === undefined) throw new StaleServerError(`answered with weights version ${JSON.stringify(reported) ?? 'none'}, which was never installed there (did it restart?)`);
    return { ...piece, policyVersion };
  }

  private async post(server: ServerState, history: number[], options: GenerateOptions, cancel: AbortSignal): Promise<AnsweredPiece> {
    const url = server.url;
    const sglang = this.protocol === 'sglang';
    let response: Response;
    try {
      response = await fetch(sglang ? `${url}/generate` : `${url}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(sglang ? this.sglangBody(history, options) : this.body(history, options)),
        signal: AbortSignal.any([cancel, AbortSignal.timeout(this.requestTimeoutMs)]),
      });
    } catch (error) {
      throw new RetryableError(`${(error as Error).message}${(error as { cause?: Error }).cause ? ` (${(error as { cause: Error }).cause.message})` : ''}`, true);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw new RetryableError(`HTTP ${response.status} with a body that is not JSON (${(error as Error).message})`);
    }
    if (response.status === 429 || response.status >= 500) throw new RetryableError(`HTTP ${response.status}: ${errorMessage(body)}`);
    if (!response.ok) throw new PolicyError(`inference server ${url} refused a piece: HTTP ${response.status}: ${errorMessage(body)}`);
    return sglang ? sglangPiece(url, body, history, options) : completionPiece(url, body, history, options);
  }
}

/** A piece from a completions answer (ours or vLLM's): choices[0] with token_ids, prompt_token_ids and logprobs. */
function completionPiece(url: string, body: unknown, history: number[], options: GenerateOptions): AnsweredPiece {
  const fail = (what: string): never => {
    throw new PolicyError(`inference server ${url}: ${what}; a token-in/token-out server must return it (vLLM: return_token_ids)`);
  };
  const choice = isRecord(body) && Array.isArray(body.choices) && isRecord(body.choices[0]) ? body.choices[0] : fail('the response has no choices[0]');
  const tokens = choice.token_ids;
  if (!Array.isArray(tokens) || !tokens.every((id) => Number.isSafeInteger(id) && id >= 0)) fail('choices[0].token_ids is missing or not token ids');
  const prompt = choice.prompt_token_ids;
  if (prompt !== undefined && prompt !== null) {
    const sent = history;
    if (!Array.isArray(prompt) || prompt.length !== sent.length || prompt.some((id, i) => id !== sent[i])) {
      throw new PolicyError(`inference server ${url}: the response's prompt_token_ids do not match the history sent (${sent.length} tokens); the completion would not extend the agent's history`);
    }
  }
  const logprobs = isRecord(choice.logprobs) ? choice.logprobs.token_logprobs : undefined;
  if (!Array.isArray(logprobs) || logprobs.length !== (tokens as number[]).length || !logprobs.every((v) => typeof v === 'number')) {
    fail(`choices[0].logprobs.token_logprobs must hold one log-prob per token`);
  }
  const ids = tokens as number[];
  const finishRaw = choice.s3_finish ?? choice.finish_reason;
  const finish: GenerateResult['finish'] =
    finishRaw === 'context' ? 'context' : ids.length > 0 && options.stopTokenIds.includes(ids[ids.length - 1]) && finishRaw !== 'length' ? 'stop' : ids.length === 0 ? 'context' : 'length';
  const draws = choice.s3_draws;
  const k = options.draws ?? 0;
  let drawTokens: number[][] | null = null;
  let drawLogprobs: number[][] | null = null;
  if (k > 0) {
    const ok = isRecord(draws) && Array.isArray(draws.tokens) && Array.isArray(draws.logprobs) && draws.tokens.length === ids.length && draws.logprobs.length === ids.length;
    if (!ok) fail(`choices[0].s3_draws must hold ${k} draws per token`);
    drawTokens = (draws as { tokens: number[][] }).tokens;
    drawLogprobs = (draws as { logprobs: number[][] }).logprobs;
    if (drawTokens.some((row) => row.length !== k) || drawLogprobs.some((row) => row.length !== k)) fail(`choices[0].s3_draws must hold ${k} draws per token`);
  }
  const reported = typeof choice.s3_policy_version === 'number' ? choice.s3_policy_version : undefined;
  return { tokens: ids, logprobs: logprobs as number[], drawTokens, drawLogprobs, finish, reported };
}

/**
 * A piece from SGLang's /generate answer: `output_ids`, `meta_info.output_token_logprobs` as
 * [log-prob, token id, text] per token, `meta_info.finish_reason.type` ('length', 'stop' or
 * 'abort', retried), `meta_info.prompt_tokens` checked against the history sent, `meta_info.weight_version`
 * the version reported.
 */
function sglangPiece(url: string, body: unknown, history: number[], options: GenerateOptions): AnsweredPiece {
  const fail = (what: string): never => {
    throw new PolicyError(`inference server ${url}: ${what}; an SGLang /generate answer with return_logprob carries it`);
  };
  const meta = isRecord(body) && isRecord(body.meta_info) ? body.meta_info : fail('the answer has no meta_info');
  const entries = meta.output_token_logprobs;
  if (!Array.isArray(entries) || !entries.every((e) => Array.isArray(e) && typeof e[0] === 'number' && Number.isSafeInteger(e[1]) && (e[1] as number) >= 0)) {
    fail('meta_info.output_token_logprobs is missing or not [log-prob, token id, …] per token');
  }
  const pairs = entries as [number, number][];
  const ids = pairs.map((e) => e[1]);
  const output = isRecord(body) ? body.output_ids : undefined;
  if (output !== undefined && (!Array.isArray(output) || output.length !== ids.length || output.some((id, i) => id !== ids[i]))) {
    fail('output_ids disagree with the token ids of meta_info.output_token_logprobs');
  }
  if (typeof meta.prompt_tokens === 'number' && meta.prompt_tokens !== history.length) {
    throw new PolicyError(`inference server ${url}: meta_info.prompt_tokens is ${meta.prompt_tokens} but the history sent has ${history.length} tokens; the completion would not extend the agent's history`);
  }
  const reason = isRecord(meta.finish_reason) ? meta.finish_reason.type : undefined;
  if (reason === 'abort') throw new RetryableError(`the server aborted the request (${JSON.stringify(meta.finish_reason)})`);
  const stopped = ids.length > 0 && options.stopTokenIds.includes(ids[ids.length - 1] as number) && reason !== 'length';
  const finish: GenerateResult['finish'] = stopped ? 'stop' : ids.length === 0 ? 'context' : 'length';
  const reported = typeof meta.weight_version === 'string' || typeof meta.weight_version === 'number' ? meta.weight_version : undefined;
  return { tokens: ids, logprobs: pairs.map((e) => e[0]), drawTokens: null, drawLogprobs: null, finish, reported };
}

function errorMessage(body: unknown): string {
  if (isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string') return body.error.message;
  const text = JSON.stringify(body) ?? '';
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** The piece as the harness gets it: cut to `steps` tokens when the clock cancelled it earlier. */
function cut(piece: RemotePiece, steps: number, draws: number): GenerateResult {
  const cancelled = steps < piece.tokens.length || piece.finish === 'cancelled';
  const n = Math.min(steps, piece.tokens.length);
  const result: GenerateResult = {
    tokens: piece.tokens.slice(0, n),
    logprobs: piece.logprobs.slice(0, n),
    finish: cancelled ? 'cancelled' : piece.finish,
    ...(piece.policyVersion === undefined ? {} : { policyVersion: piece.policyVersion }),
    ...(draws > 0 && piece.drawTokens !== null && piece.drawLogprobs !== null
      ? { draws: { tokens: Int32Array.from(piece.drawTokens.slice(0, n).flat()), logprobs: Float32Array.from(piece.drawLogprobs.slice(0, n).flat()) } }
      : {}),
  };
  return result;
}
