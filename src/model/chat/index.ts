// The public surface of the chat layer: Qwen3 ChatML rendering with tools and thinking and the
// assistant-response parser. docs/chat-format.md specifies the format. Python-style JSON, the
// ToolSpec shape, tool-call errors and their validation live one level down, in src/common/.

export { ChatFormatError } from './chat-format-error.js';
export {
  END_OF_TEXT,
  IM_END,
  IM_START,
  THINK_CLOSE,
  THINK_OPEN,
  TOOL_CALL_CLOSE,
  TOOL_CALL_OPEN,
  TOOL_RESPONSE_CLOSE,
  TOOL_RESPONSE_OPEN,
} from './chat-markers.js';
export { jsonDumps } from '../../common/json-dumps.js';
export type { JsonValue } from '../../common/json-dumps.js';
export type { PieceFinish } from './piece-finish.js';
export { renderFollowUpUserTurn, renderToolResponses, renderTurnClose } from './render-continuation.js';
export type { FollowUpUserTurnOptions, ToolResponsesOptions } from './render-continuation.js';
export { renderToolCall } from './render-tool-call.js';
export type { ToolCallTextOptions } from './render-tool-call.js';
export { renderAssistantPrefix, renderPrompt, renderSystemTurn, renderUserTurn } from './render-turns.js';
export type { PromptOptions, SystemTurnOptions } from './render-turns.js';
export { toolErrorOutput } from '../../common/tool-call-error.js';
export type { ToolCallError, ToolCallErrorKind } from '../../common/tool-call-error.js';
export { parseAssistantResponse } from './tool-call-parser.js';
export type {
  CutToolCall,
  FinalAnswer,
  ParsedResponse,
  ParseResponseOptions,
  ToolCall,
  ToolCallOutcome,
} from './tool-call-parser.js';
export { toolSpecJson } from './tool-spec.js';
