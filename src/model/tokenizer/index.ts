// The tokenizer layer: byte-level BPE encoding and decoding of Hugging Face tokenizer.json files,
// and the deterministic trainer that makes s3-mini's tokenizer.

export { AddedTokenSplitter, type TextSegment } from './added-token-splitter.js';
export { BpeMerger, type BpeMergerOptions } from './bpe-merger.js';
export { BYTE_LEVEL_ORDER, BYTE_TO_CHAR, CHAR_TO_BYTE, bytesToByteLevel } from './byte-level.js';
export { preTokenize } from './pre-tokenize.js';
export { readTokenizerJson, type AddedTokenSpec, type TokenizerSpec } from './read-tokenizer-json.js';
export { compileSplitPattern, type SplitPatternOptions } from './split-pattern.js';
export { StreamingDecoder } from './streaming-decoder.js';
export { Tokenizer } from './tokenizer.js';
export type * from './tokenizer-json.js';
export { UnknownTokenIdError, type UnknownTokenIdErrorOptions } from './unknown-token-id-error.js';
export { QWEN3_ADDED_TOKENS, QWEN3_SPLIT_PATTERN, type AddedTokenDefinition } from './qwen3-format.js';
export { trainByteLevelBpe, type TrainByteLevelBpeOptions } from './train-bpe.js';
