// Renders everything the harness appends to an agent's history (docs/chat-format.md) and turns it
// into tokens with a role per token. Each append is tokenized as one string, so context tokens are
// exactly what the tokenizer makes of the rendered text. Roles: the opening prompt is 'prompt', the
// final-answer prompt 'final_prompt'; in a tool-output turn the frame and tool outputs are
// 'tool_output', a notification's JSON is 'notification' (a turn holding only a notification is
// 'notification' throughout) and every received message's text inside a read_messages output is
// 'message'. A token that straddles a span's edge takes the span's role.
//
// Speed. Text is encoded by a StretchEncoder (exactly tokenizer.encode, with the stretches between
// chat markers cached), so frames and outputs that recur (teammates in the same rooms) encode once.

import { jsonDumps } from '../common/json-dumps.js';
import type { ToolSpec } from '../common/tool-spec.js';
import type { PieceFinish } from '../model/chat/piece-finish.js';
import { renderFollowUpUserTurn, renderToolResponses } from '../model/chat/render-continuation.js';
import { renderPrompt } from '../model/chat/render-turns.js';
import type { Tokenizer } from '../model/tokenizer/tokenizer.js';
import { TOKEN_ROLE_CODE, type ContextAppend } from '../policy/agent-sequence.js';
import type { ContextItem, FinalPromptItem, PromptItem } from '../policy/context-item.js';
import { StretchEncoder } from '../policy/stretch-encoder.js';

/** One tool output block of a tool-output turn. */
export interface OutputBlock {
  /** The output text (JSON). */
  readonly output: string;
  /** Whether it is a notification rather than a tool result. */
  readonly notification: boolean;
  /** Texts of received messages the output holds (read_messages), in order. */
  readonly messageTexts?: readonly string[];
}

/** Options of ContextRenderer.prompt. */
export interface PromptAppendOptions {
  /** The prompt item (system and user text). */
  readonly item: PromptItem;
  /** The tools listed in the system turn. */
  readonly tools: readonly ToolSpec[];
}

/** Options of ContextRenderer.toolResponses. */
export interface ToolResponsesAppendOptions {
  /** The output blocks in order. */
  readonly blocks: readonly OutputBlock[];
  /** How the last piece ended (decides how the assistant turn is closed). */
  readonly after: PieceFinish;
  /** The structured items of the append. */
  readonly items: readonly ContextItem[];
}

/** Options of ContextRenderer.finalPrompt. */
export interface FinalPromptAppendOptions {
  /** The final prompt item. */
  readonly item: FinalPromptItem;
  /** How the last piece ended. */
  readonly after: PieceFinish;
}

/** Stretches cached per renderer (one per episode); the cache is emptied when full. */
const MAX_CACHED_STRETCHES = 8192;

interface RoleSpan {
  /** Character offsets in the rendered text. */
  readonly start: number;
  readonly end: number;
  readonly code: number;
}

/** Options of ContextRenderer. */
export interface ContextRendererOptions {
  /** Qwen3's thinking mode (default on); off pre-fills the empty reasoning block in every generation prompt. */
  readonly thinking?: boolean;
}

/** Renders and tokenizes context appends for one tokenizer. */
export class ContextRenderer {
  private readonly encoder: StretchEncoder;
  private readonly thinking: boolean;

  /** A renderer over `tokenizer`. */
  constructor(
    private readonly tokenizer: Tokenizer,
    options: ContextRendererOptions = {},
  ) {
    this.encoder = new StretchEncoder({ tokenizer, maxCachedStretches: MAX_CACHED_STRETCHES });
    this.thinking = options.thinking ?? true;
  }

  /** The opening prompt: system turn with tools, first user turn, generation prompt. */
  prompt(options: PromptAppendOptions): ContextAppend {
    const { item, tools } = options;
    const text = renderPrompt({ system: item.system, tools, user: item.user, thinking: this.thinking });
    return this.tokenize(text, TOKEN_ROLE_CODE.prompt, [], [item]);
  }

  /** A tool-output turn: the close of the assistant turn, one block per output, the generation prompt. */
  toolResponses(options: ToolResponsesAppendOptions): ContextAppend {
    const { blocks, after, items } = options;
    const text = renderToolResponses({ outputs: blocks.map((block) => block.output), after, thinking: this.thinking });
    const onlyNotifications = blocks.every((block) => block.notification);
    const spans: RoleSpan[] = [];
    let cursor = 0;
    for (const block of blocks) {
      const at = text.indexOf(block.output, cursor);
      if (at === -1) continue;
      if (block.notification && !onlyNotifications) spans.push({ start: at, end: at + block.output.length, code: TOKEN_ROLE_CODE.notification });
      let inner = at;
      for (const messageText of block.messageTexts ?? []) {
        const literal = jsonDumps(messageText);
        const found = text.indexOf(literal, inner);
        if (found === -1 || found >= at + block.output.length) continue;
        spans.push({ start: found, end: found + literal.length, code: TOKEN_ROLE_CODE.message });
        inner = found + literal.length;
      }
      cursor = at + block.output.length;
    }
    const base = onlyNotifications ? TOKEN_ROLE_CODE.notification : TOKEN_ROLE_CODE.tool_output;
    return this.tokenize(text, base, spans, items);
  }

  /** The final-answer prompt as a plain user turn after the agent's last piece. */
  finalPrompt(options: FinalPromptAppendOptions): ContextAppend {
    const text = renderFollowUpUserTurn({ text: options.item.text, after: options.after, thinking: this.thinking });
    return this.tokenize(text, TOKEN_ROLE_CODE.final_prompt, [], [options.item]);
  }

  private tokenize(text: string, base: number, spans: readonly RoleSpan[], items: readonly ContextItem[]): ContextAppend {
    const stretches = this.encoder.split(text);
    let count = 0;
    for (const stretch of stretches) count += stretch.tokens.length;
    const tokens = new Array<number>(count);
    const roles = new Uint8Array(count).fill(base);
    let offset = 0;
    for (const stretch of stretches) {
      for (let i = 0; i < stretch.tokens.length; i += 1) tokens[offset + i] = stretch.tokens[i];
      const stretchRoles = spans.length === 0 ? null : this.stretchRoles(text, stretch.start, stretch.end, stretch.tokens, base, spans);
      if (stretchRoles !== null) roles.set(stretchRoles, offset);
      offset += stretch.tokens.length;
    }
    return { tokens, roles, items };
  }

  // Spans are in characters, tokens in bytes: convert span edges to UTF-8 byte offsets within the
  // stretch, then walk its tokens. NFC normalization can change byte lengths; then the stretch's bytes
  // and its tokens' bytes disagree and the base role is kept rather than guessing. Null: all base.
  private stretchRoles(text: string, start: number, end: number, tokens: readonly number[], base: number, spans: readonly RoleSpan[]): Uint8Array | null {
    const inside = spans.filter((span) => span.start < end && span.end > start);
    if (inside.length === 0) return null;
    const roles = new Uint8Array(tokens.length).fill(base);
    const lengths = tokens.map((id) => this.tokenizer.tokenBytes(id).length);
    if (lengths.reduce((total, length) => total + length, 0) !== Buffer.byteLength(text.slice(start, end))) return roles;
    const byteSpans = inside.map((span) => ({
      start: Buffer.byteLength(text.slice(start, Math.max(start, span.start))),
      end: Buffer.byteLength(text.slice(start, Math.min(end, span.end))),
      code: span.code,
    }));
    let offset = 0;
    for (let i = 0; i < tokens.length; i += 1) {
      const tokenEnd = offset + lengths[i];
      for (const span of byteSpans) {
        if (span.start < tokenEnd && span.end > offset) roles[i] = span.code;
      }
      offset = tokenEnd;
    }
    return roles;
  }
}
