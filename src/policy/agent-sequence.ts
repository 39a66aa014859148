// One agent's history as tokens, the truth of s³ (ARCHITECTURE.md, "Tokens, not text, are the
// truth"): every token id with its role (opening prompt, own sampled token, tool output,
// notification, received message, final-answer prompt) and, for sampled tokens, the sampler's
// log-prob (NaN for context). Sampled tokens are stored exactly as the policy returned them and
// never re-tokenized; context is appended as tokens the harness rendered. The sequence is
// append-only, so a policy that keeps a KV cache processes only what lies past the length it saw
// last. Pieces record where each generation request's tokens lie and which weights produced them;
// context items record what the appends said, for scripted policies.
//
// Storage is a list of fixed-size chunks, so a growing history is never copied (hundreds of agents
// grow at once); tokens(), roles() and logprobs() copy out any range, typically just the tokens past
// what a policy has already seen.

import type { ContextItem } from './context-item.js';
import type { GenerateFinish, SampledDraws } from './policy.js';

/** The role of a token in an agent's history; only 'sampled' tokens are trained on. */
export type TokenRole = 'prompt' | 'sampled' | 'tool_output' | 'notification' | 'message' | 'final_prompt';

/** Every role, indexed by its code in `AgentSequence.roles`. */
export const TOKEN_ROLES: readonly TokenRole[] = ['prompt', 'sampled', 'tool_output', 'notification', 'message', 'final_prompt'];

/** The code of each role in `AgentSequence.roles`. */
export const TOKEN_ROLE_CODE: Readonly<Record<TokenRole, number>> = {
  prompt: 0,
  sampled: 1,
  tool_output: 2,
  notification: 3,
  message: 4,
  final_prompt: 5,
};

/** One generation request's output within the sequence. */
export interface PieceRecord {
  /** Index of the piece's first token. */
  readonly start: number;
  /** Index just past its last token. */
  readonly end: number;
  /** The weights version that sampled it, null when the policy has none. */
  readonly policyVersion: number | null;
  /** Why the policy stopped. */
  readonly finish: GenerateFinish;
  /** The policy's K draws per position, when recorded. */
  readonly draws?: SampledDraws;
}

/** What identifies the agent a sequence belongs to. */
export interface AgentSequenceOptions {
  /** The agent's index in its team. */
  readonly agentIndex: number;
  /** The agent's name in its episode. */
  readonly agentName: string;
  /** The agent's sampling seed, passed to every generation request. */
  readonly samplingSeed: bigint;
}

/** A context append: token ids with one role code each, and the structured items it carries. */
export interface ContextAppend {
  /** The token ids of the rendered text. */
  readonly tokens: readonly number[];
  /** One role code per token (TOKEN_ROLE_CODE), never 'sampled'. */
  readonly roles: Uint8Array;
  /** What the append says, in order. */
  readonly items: readonly ContextItem[];
}

/** A generated piece to append. */
export interface SampledAppend {
  /** The sampled ids. */
  readonly tokens: readonly number[];
  /** Their sampler log-probs. */
  readonly logprobs: readonly number[];
  /** Why the policy stopped. */
  readonly finish: GenerateFinish;
  /** The weights version, when the policy reports one. */
  readonly policyVersion?: number;
  /** The K draws per position, when recorded. */
  readonly draws?: SampledDraws;
}

/** Tokens per storage chunk. */
const CHUNK_TOKENS = 4096;

interface Chunk {
  readonly tokens: Int32Array;
  readonly roles: Uint8Array;
  readonly logprobs: Float32Array;
}

/** An agent's append-only token history. */
export class AgentSequence {
  /** The agent's index in its team. */
  readonly agentIndex: number;
  /** The agent's name in its episode. */
  readonly agentName: string;
  /** The agent's sampling seed. */
  readonly samplingSeed: bigint;
  /** Generation pieces in order. */
  readonly pieces: PieceRecord[] = [];
  /** Structured context items in order of appending. */
  readonly context: ContextItem[] = [];

  private readonly chunks: Chunk[] = [];
  private size = 0;
  private sampled = 0;

  /** An empty history for one agent. */
  constructor(options: AgentSequenceOptions) {
    this.agentIndex = options.agentIndex;
    this.agentName = options.agentName;
    this.samplingSeed = options.samplingSeed;
  }

  /** Number of tokens in the history. */
  get length(): number {
    return this.size;
  }

  /** Number of sampled tokens (everything the agent generated). */
  get sampledCount(): number {
    return this.sampled;
  }

  /** A copy of the token ids in [start, end) (default: all). */
  tokens(start = 0, end = this.size): Int32Array {
    return this.copy(start, end, new Int32Array(Math.max(0, end - start)), (chunk) => chunk.tokens);
  }

  /** A copy of the role codes in [start, end) (TOKEN_ROLES names the codes). */
  roles(start = 0, end = this.size): Uint8Array {
    return this.copy(start, end, new Uint8Array(Math.max(0, end - start)), (chunk) => chunk.roles);
  }

  /** A copy of the sampler log-probs in [start, end) (float32, as samplers compute them; NaN for context). */
  logprobs(start = 0, end = this.size): Float32Array {
    return this.copy(start, end, new Float32Array(Math.max(0, end - start)), (chunk) => chunk.logprobs);
  }

  /** The role of token `index`. */
  roleAt(index: number): TokenRole {
    return TOKEN_ROLES[this.chunks[Math.floor(index / CHUNK_TOKENS)].roles[index % CHUNK_TOKENS]];
  }

  /** Appends rendered context tokens with their roles and structured items. */
  appendContext(append: ContextAppend): void {
    for (let i = 0; i < append.tokens.length; i += 1) this.push(append.tokens[i], append.roles[i], Number.NaN);
    for (const item of append.items) this.context.push(item);
  }

  /** Appends one generated piece exactly as sampled and records it; returns the piece record. */
  appendSampled(append: SampledAppend): PieceRecord {
    const start = this.size;
    for (let i = 0; i < append.tokens.length; i += 1) this.push(append.tokens[i], TOKEN_ROLE_CODE.sampled, append.logprobs[i]);
    this.sampled += append.tokens.length;
    const piece: PieceRecord = {
      start,
      end: this.size,
      policyVersion: append.policyVersion ?? null,
      finish: append.finish,
      ...(append.draws === undefined ? {} : { draws: append.draws }),
    };
    this.pieces.push(piece);
    return piece;
  }

  private push(token: number, role: number, logprob: number): void {
    const at = this.size % CHUNK_TOKENS;
    if (at === 0) {
      this.chunks.push({ tokens: new Int32Array(CHUNK_TOKENS), roles: new Uint8Array(CHUNK_TOKENS), logprobs: new Float32Array(CHUNK_TOKENS) });
    }
    const chunk = this.chunks[this.chunks.length - 1];
    chunk.tokens[at] = token;
    chunk.roles[at] = role;
    chunk.logprobs[at] = logprob;
    this.size += 1;
  }

  private copy<T extends Int32Array | Uint8Array | Float32Array>(start: number, end: number, out: T, field: (chunk: Chunk) => T): T {
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > this.size || start > end) {
      throw new RangeError(`AgentSequence of ${this.agentName}: range [${start}, ${end}) is outside its ${this.size} tokens`);
    }
    for (let index = start; index < end; ) {
      const chunkIndex = Math.floor(index / CHUNK_TOKENS);
      const offset = index % CHUNK_TOKENS;
      const take = Math.min(CHUNK_TOKENS - offset, end - index);
      out.set(field(this.chunks[chunkIndex]).subarray(offset, offset + take), index - start);
      index += take;
    }
    return out;
  }
}
