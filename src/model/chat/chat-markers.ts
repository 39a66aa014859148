// The literal marker strings of Qwen3's ChatML with tools and thinking. Each one is a single
// added token in Qwen3's tokenizer.json, so they must be spelled exactly as here.

/** Opens a turn; followed by the role and a newline (`<|im_start|>` = id 151644). */
export const IM_START = '<|im_start|>';
/** Closes a turn (`<|im_end|>` = id 151645); the model samples it to end a response. */
export const IM_END = '<|im_end|>';
/** Qwen3's second end-of-sequence token (`<|endoftext|>` = id 151643). */
export const END_OF_TEXT = '<|endoftext|>';
/** Opens a tool call in an assistant turn (id 151657). */
export const TOOL_CALL_OPEN = '<tool_call>';
/** Closes a tool call (id 151658); generation stops here so the call can run. */
export const TOOL_CALL_CLOSE = '</tool_call>';
/** Opens one tool output inside a user turn (id 151665). */
export const TOOL_RESPONSE_OPEN = '<tool_response>';
/** Closes one tool output (id 151666). */
export const TOOL_RESPONSE_CLOSE = '</tool_response>';
/** Opens the model's private reasoning (id 151667). */
export const THINK_OPEN = '<think>';
/** Closes the model's private reasoning (id 151668). */
export const THINK_CLOSE = '</think>';
