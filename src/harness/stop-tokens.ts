// The ids of the markers that end a generation piece (SPEC §3: `</tool_call>`, `<|im_end|>`,
// `<|endoftext|>`), looked up in the policy's tokenizer, never hard-coded, so Qwen3's tokenizer and
// s3-mini's both work.

import { ConfigError } from '../errors.js';
import { END_OF_TEXT, IM_END, TOOL_CALL_CLOSE } from '../model/chat/chat-markers.js';
import type { Tokenizer } from '../model/tokenizer/tokenizer.js';

/** The stop ids a team generates with. */
export interface StopTokens {
  /** `</tool_call>`, `<|im_end|>`, `<|endoftext|>`: a piece stops right after any of them. */
  readonly stopTokenIds: readonly number[];
  /** `</tool_call>`: a stop here means a tool call is waiting to run. */
  readonly toolCallCloseId: number;
}

/** Looks the stop markers up; throws ConfigError naming a marker the tokenizer lacks. */
export function stopTokensOf(tokenizer: Tokenizer): StopTokens {
  const ids = [TOOL_CALL_CLOSE, IM_END, END_OF_TEXT].map((marker) => {
    const id = tokenizer.tokenToId(marker);
    if (id === undefined) {
      throw new ConfigError(`tokenizer ${tokenizer.source} has no token ${marker}; the harness needs it as a single added token to stop generation pieces`);
    }
    return id;
  });
  return { stopTokenIds: ids, toolCallCloseId: ids[0] };
}
