// The opening turns of an agent's history in Qwen3's ChatML with tools, character for character
// as Qwen3's chat template renders them: the system turn (with the <tools> block when the agent
// has tools), a user turn, and the generation prompt. With thinking on (the default) the generation
// prompt pre-fills nothing and the model opens its own `<think>` block; with thinking off it ends in
// the empty block `<think>\n\n</think>\n\n`, as the template's enable_thinking=false writes it.

import { IM_END, IM_START, THINK_CLOSE, THINK_OPEN } from './chat-markers.js';
import type { ToolSpec } from '../../common/tool-spec.js';
import { toolSpecJson } from './tool-spec.js';

/** Options of `renderSystemTurn`: the system prompt and the tools the agent may call. */
export interface SystemTurnOptions {
  system: string;
  tools: readonly ToolSpec[];
}

/** Options of `renderPrompt`: the system turn, the first user turn, then the generation prompt. */
export interface PromptOptions extends SystemTurnOptions {
  user: string;
  /** Qwen3's thinking mode (default on); off pre-fills an empty reasoning block in every generation prompt. */
  thinking?: boolean;
}

const TOOLS_PREAMBLE =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>';
const TOOLS_POSTAMBLE =
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments ' +
  'within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/** The system turn; with no tools it is a plain system turn, as in the template's tool-less branch. */
export function renderSystemTurn(options: SystemTurnOptions): string {
  const { system, tools } = options;
  if (tools.length === 0) return `${IM_START}system\n${system}${IM_END}\n`;
  const toolLines = tools.map((tool) => `\n${toolSpecJson(tool)}`).join('');
  return `${IM_START}system\n${system}\n\n${TOOLS_PREAMBLE}${toolLines}${TOOLS_POSTAMBLE}${IM_END}\n`;
}

/** A complete user turn holding `text`. */
export function renderUserTurn(text: string): string {
  return `${IM_START}user\n${text}${IM_END}\n`;
}

/** The generation prompt that opens an assistant turn: nothing pre-filled with thinking on, the empty reasoning block with it off. */
export function renderAssistantPrefix(thinking = true): string {
  return thinking ? `${IM_START}assistant\n` : `${IM_START}assistant\n${THINK_OPEN}\n\n${THINK_CLOSE}\n\n`;
}

/** An agent's initial history: system turn, first user turn, generation prompt. */
export function renderPrompt(options: PromptOptions): string {
  return renderSystemTurn(options) + renderUserTurn(options.user) + renderAssistantPrefix(options.thinking ?? true);
}
