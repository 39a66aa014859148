// The tokenizer.json conventions of Qwen3 that s3-mini's tokenizer copies, so that the chat format
// and the tool-call parser work unchanged on both: the split regex and the added tokens in id order.
// The test suite checks both against the real Qwen3 tokenizer.json.

/** Qwen3's pre-tokenizer regex, in the Oniguruma syntax tokenizer.json stores. */
export const QWEN3_SPLIT_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** An added token to place after a trained BPE vocabulary. */
export interface AddedTokenDefinition {
  /** The exact text of the token. */
  content: string;
  /** Whether it is a control token (true) or added text such as `<think>` (false). */
  special: boolean;
}

const SPECIAL = [
  '<|endoftext|>',
  '<|im_start|>',
  '<|im_end|>',
  '<|object_ref_start|>',
  '<|object_ref_end|>',
  '<|box_start|>',
  '<|box_end|>',
  '<|quad_start|>',
  '<|quad_end|>',
  '<|vision_start|>',
  '<|vision_end|>',
  '<|vision_pad|>',
  '<|image_pad|>',
  '<|video_pad|>',
];
const ADDED_TEXT = [
  '<tool_call>',
  '</tool_call>',
  '<|fim_prefix|>',
  '<|fim_middle|>',
  '<|fim_suffix|>',
  '<|fim_pad|>',
  '<|repo_name|>',
  '<|file_sep|>',
  '<tool_response>',
  '</tool_response>',
  '<think>',
  '</think>',
];

/** Qwen3's 26 added tokens in id order (151643 onwards in Qwen3). */
export const QWEN3_ADDED_TOKENS: readonly AddedTokenDefinition[] = [
  ...SPECIAL.map((content) => ({ content, special: true })),
  ...ADDED_TEXT.map((content) => ({ content, special: false })),
];
