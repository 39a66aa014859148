// What the harness appends to an agent's token history after an assistant generation piece:
// the close of the open assistant turn (when the piece did not sample `<|im_end|>` itself), a
// user turn of tool outputs or of plain text, and a fresh generation prompt. The sampled piece
// is never changed; these strings are only ever appended after it (docs/chat-format.md).

import { ChatFormatError } from './chat-format-error.js';
import { IM_END, IM_START, TOOL_RESPONSE_CLOSE, TOOL_RESPONSE_OPEN } from './chat-markers.js';
import type { PieceFinish } from './piece-finish.js';
import { renderAssistantPrefix, renderUserTurn } from './render-turns.js';

/** Options of `renderToolResponses`: the tool outputs in order, and how the last piece ended. */
export interface ToolResponsesOptions {
  outputs: readonly string[];
  after: PieceFinish;
  /** Qwen3's thinking mode of the generation prompt that follows (default on; render-turns.ts). */
  thinking?: boolean;
}

/** Options of `renderFollowUpUserTurn`: the user text, and how the last piece ended. */
export interface FollowUpUserTurnOptions {
  text: string;
  after: PieceFinish;
  /** Qwen3's thinking mode of the generation prompt that follows (default on). */
  thinking?: boolean;
}

/**
 * The text that closes the assistant turn a piece left behind: `\n` when the piece sampled
 * `<|im_end|>` (finish `end`), otherwise `<|im_end|>\n` (the turn is still open after a tool
 * call, a piece cut by the token limit or a full context).
 */
export function renderTurnClose(after: PieceFinish): string {
  return after === 'end' ? '\n' : `${IM_END}\n`;
}

/**
 * Closes the assistant turn, then one user turn holding a `<tool_response>` block per output (tool
 * results, tool-call errors and notifications alike), then the generation prompt.
 */
export function renderToolResponses(options: ToolResponsesOptions): string {
  const { outputs, after } = options;
  if (outputs.length === 0) {
    throw new ChatFormatError('renderToolResponses: outputs is empty; pass at least one tool output to append');
  }
  const blocks = outputs.map((output) => `\n${TOOL_RESPONSE_OPEN}\n${output}\n${TOOL_RESPONSE_CLOSE}`).join('');
  return `${renderTurnClose(after)}${IM_START}user${blocks}${IM_END}\n${renderAssistantPrefix(options.thinking ?? true)}`;
}

/** Closes the assistant turn, then a plain user turn (the final-answer prompt), then the generation prompt. */
export function renderFollowUpUserTurn(options: FollowUpUserTurnOptions): string {
  return renderTurnClose(options.after) + renderUserTurn(options.text) + renderAssistantPrefix(options.thinking ?? true);
}
