// How an assistant generation piece ended, in the terms the chat format cares about. The harness
// maps its policy's finish reason onto this before parsing a piece or appending after it.

/**
 * Why a generation piece stopped: `tool_call` (it sampled `</tool_call>`), `end` (it sampled
 * `<|im_end|>` or `<|endoftext|>`: the response is over), `length` (the piece's token limit,
 * 1,024 or the remaining allowance, cut the response) or `context` (the context window is full).
 */
export type PieceFinish = 'tool_call' | 'end' | 'length' | 'context';
