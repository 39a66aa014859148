// The body of `POST /v1/completions` in its token-in/token-out form, as vLLM serves it, checked field
// by field: `prompt` as token ids (one list, or a list of lists for several prompts), `max_tokens`,
// `temperature`, `seed`, `stop_token_ids`, `logprobs`, `return_token_ids`, and our extension
// `s3_draws` (K extra draws per position with their log-probs, Appendix A.1's score centering).
// Fields whose meaning we would silently drop (text stops, streaming, echo, n > 1, nucleus
// sampling, penalties, logit biases) are refused, each with what to use instead; fields that change
// nothing (user, a 0 penalty, top_p 1) are accepted. A bad field is an HttpError(400) naming it.

import { badRequest } from './http-error.js';

/** One checked completion request. */
export interface CompletionRequest {
  /** The model the client named (echoed back), or null. */
  readonly model: string | null;
  /** One or more prompts, each a list of token ids; each gets one choice, in order. */
  readonly prompts: readonly (readonly number[])[];
  /** Tokens to generate at most (default 16, as OpenAI's). */
  readonly maxTokens: number;
  /** Sampling temperature (default 1). */
  readonly temperature: number;
  /** The sampling seed (every draw is keyed by it and the token's position); null: the server picks one. */
  readonly seed: bigint | null;
  /** Generation stops after sampling any of these (the stop token is returned). */
  readonly stopTokenIds: readonly number[];
  /** Whether to return each sampled token's log-prob (`logprobs` ≥ 1). */
  readonly logprobs: boolean;
  /** Whether to return the prompt's and the completion's token ids. */
  readonly returnTokenIds: boolean;
  /** K extra draws per generated position (our `s3_draws`; 0 for none). */
  readonly draws: number;
}

/** The server's limits a request is checked against. */
export interface CompletionLimits {
  /** Token ids must be below this. */
  readonly vocabSize: number;
  /** Prompt plus max_tokens may not exceed this. */
  readonly maxContext: number;
  /** The most prompts one request may carry. */
  readonly maxPrompts: number;
  /** The most extra draws per position. */
  readonly maxDraws: number;
}

const MAX_SEED = (1n << 64n) - 1n;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function integer(body: Record<string, unknown>, field: string, fallback: number, min: number, max: number): number {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw badRequest(field, `${field} must be an integer from ${min} to ${max}, got ${shown(value)}.`);
  }
  return value;
}

function tokenList(value: unknown, field: string, limits: CompletionLimits): number[] {
  if (!Array.isArray(value)) throw badRequest(field, `${field} must be a list of token ids, got ${shown(value)}.`);
  value.forEach((id, index) => {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0 || id >= limits.vocabSize) {
      throw badRequest(field, `${field}[${index}] must be a token id from 0 to ${limits.vocabSize - 1} (the model's vocabulary), got ${shown(id)}.`, 'invalid_token_id');
    }
  });
  return value as number[];
}

function prompts(value: unknown, limits: CompletionLimits): number[][] {
  if (typeof value === 'string' || (Array.isArray(value) && value.some((item) => typeof item === 'string'))) {
    throw badRequest('prompt', 'prompt must be token ids: this server is token-in/token-out (tokenize with the model\'s tokenizer.json).');
  }
  if (!Array.isArray(value) || value.length === 0) throw badRequest('prompt', `prompt must be a non-empty list of token ids, or a list of such lists, got ${shown(value)}.`);
  const lists = Array.isArray(value[0]) ? value : [value];
  if (lists.length > limits.maxPrompts) throw badRequest('prompt', `prompt holds ${lists.length} prompts; at most ${limits.maxPrompts} per request.`);
  return lists.map((list, index) => {
    const field = lists === value ? `prompt[${index}]` : 'prompt';
    const tokens = tokenList(list, field, limits);
    if (tokens.length === 0) throw badRequest(field, `${field} is empty; a prompt needs at least one token.`);
    return tokens;
  });
}

function seed(value: unknown): bigint | null {
  if (value === undefined || value === null) return null;
  const parsed =
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : typeof value === 'string' && /^\d{1,20}$/.test(value) ? BigInt(value) : null;
  if (parsed === null || parsed > MAX_SEED) throw badRequest('seed', `seed must be an integer from 0 to 2^64 − 1 (a decimal string beyond 2^53), got ${shown(value)}.`);
  return parsed;
}

/** Fields that would change the result if honoured: refused rather than ignored. */
function refuseUnsupported(body: Record<string, unknown>): void {
  const refuse = (field: string, message: string): never => {
    throw badRequest(field, message, 'unsupported_parameter');
  };
  if (body.stream === true) refuse('stream', 'stream is not supported; request the whole completion.');
  if (body.echo === true) refuse('echo', 'echo is not supported; the prompt\'s ids come back with return_token_ids.');
  if (body.n !== undefined && body.n !== null && body.n !== 1) refuse('n', 'n must be 1; send one request (or one prompt) per completion, each with its own seed.');
  if (body.best_of !== undefined && body.best_of !== null && body.best_of !== 1) refuse('best_of', 'best_of must be 1.');
  const stop = body.stop;
  if (stop !== undefined && stop !== null && !(Array.isArray(stop) && stop.length === 0)) refuse('stop', 'stop strings are not supported (token-in/token-out); use stop_token_ids.');
  if (body.suffix !== undefined && body.suffix !== null) refuse('suffix', 'suffix is not supported.');
  if (body.top_p !== undefined && body.top_p !== null && body.top_p !== 1) refuse('top_p', 'top_p must be 1: the sampler draws from the full distribution.');
  if (body.top_k !== undefined && body.top_k !== null && body.top_k !== -1 && body.top_k !== 0) refuse('top_k', 'top_k must be -1 or 0 (off): the sampler draws from the full distribution.');
  for (const field of ['presence_penalty', 'frequency_penalty']) {
    if (body[field] !== undefined && body[field] !== null && body[field] !== 0) refuse(field, `${field} must be 0; penalties are not supported.`);
  }
  const bias = body.logit_bias;
  if (bias !== undefined && bias !== null && !(isRecord(bias) && Object.keys(bias).length === 0)) refuse('logit_bias', 'logit_bias is not supported.');
}

/** Checks a parsed request body against the server's limits; throws HttpError(400) naming the first bad field. */
export function parseCompletionRequest(body: unknown, limits: CompletionLimits): CompletionRequest {
  if (!isRecord(body)) throw badRequest('body', `the request body must be a JSON object, got ${shown(body)}.`);
  refuseUnsupported(body);
  const model = body.model;
  if (model !== undefined && model !== null && typeof model !== 'string') throw badRequest('model', `model must be a string, got ${shown(model)}.`);
  const promptList = prompts(body.prompt, limits);
  const maxTokens = integer(body, 'max_tokens', 16, 1, limits.maxContext);
  const temperature = body.temperature ?? 1;
  if (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature < 0) {
    throw badRequest('temperature', `temperature must be a finite number ≥ 0 (0: greedy), got ${shown(temperature)}.`);
  }
  const stops = body.stop_token_ids === undefined || body.stop_token_ids === null ? [] : tokenList(body.stop_token_ids, 'stop_token_ids', limits);
  if (typeof body.logprobs === 'number' && Number.isSafeInteger(body.logprobs) && body.logprobs > 1) {
    throw badRequest('logprobs', `logprobs must be 0 or 1: top alternatives are not returned (1 returns each sampled token's log-prob), got ${body.logprobs}.`, 'unsupported_parameter');
  }
  const logprobs = integer(body, 'logprobs', 0, 0, 1);
  const returnTokenIds = body.return_token_ids ?? false;
  if (typeof returnTokenIds !== 'boolean') throw badRequest('return_token_ids', `return_token_ids must be true or false, got ${shown(returnTokenIds)}.`);
  const draws = integer(body, 's3_draws', 0, 0, limits.maxDraws);
  promptList.forEach((prompt, index) => {
    if (prompt.length + maxTokens > limits.maxContext) {
      const field = promptList.length > 1 ? `prompt[${index}]` : 'prompt';
      throw badRequest(
        field,
        `This model's context is ${limits.maxContext} tokens; ${field} has ${prompt.length} and max_tokens asks for ${maxTokens} more. Shorten the prompt or lower max_tokens.`,
        'context_length_exceeded',
      );
    }
  });
  return {
    model: model ?? null,
    prompts: promptList,
    maxTokens,
    temperature,
    seed: seed(body.seed),
    stopTokenIds: stops,
    logprobs: logprobs > 0,
    returnTokenIds,
    draws,
  };
}
