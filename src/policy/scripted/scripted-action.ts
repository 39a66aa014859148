// What a scripted agent does next and the assistant text that expresses it, in the shape a Qwen3
// model with thinking on writes: a short reasoning block, then one tool call (generation stops at
// </tool_call>), a `####` answer line, or plain text that ends the response (the agent goes idle);
// with thinking off, the same without the reasoning block.

import type { JsonValue } from '../../common/json-dumps.js';
import { IM_END, THINK_CLOSE, THINK_OPEN } from '../../model/chat/chat-markers.js';
import { renderToolCall } from '../../model/chat/render-tool-call.js';

/** One scripted action with its reasoning line. */
export type ScriptedAction =
  | { readonly kind: 'call'; readonly thought: string; readonly name: string; readonly arguments: Readonly<Record<string, JsonValue>> }
  | { readonly kind: 'answer'; readonly thought: string; readonly answer: string }
  | { readonly kind: 'idle'; readonly thought: string; readonly text: string };

/**
 * The assistant text of an action: `<think>\n…\n</think>\n\n` then the call, `#### answer<|im_end|>` or
 * `text<|im_end|>`. With thinking off the generation prompt already holds an empty reasoning block, so
 * the text starts at the call, answer or text.
 */
export function renderAction(action: ScriptedAction, thinking = true): string {
  const reasoning = thinking ? `${THINK_OPEN}\n${action.thought}\n${THINK_CLOSE}\n\n` : '';
  switch (action.kind) {
    case 'call':
      return reasoning + renderToolCall({ name: action.name, arguments: { ...action.arguments } });
    case 'answer':
      return `${reasoning}#### ${action.answer}${IM_END}`;
    case 'idle':
      return `${reasoning}${action.text}${IM_END}`;
  }
}
