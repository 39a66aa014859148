// The shape of a Hugging Face `tokenizer.json` for a byte-level BPE tokenizer, as Qwen3 ships it and
// as the s3-mini trainer writes it. Only the parts s³ reads or writes are typed precisely.

/** One entry of `added_tokens`: a string matched verbatim in the input and never merged. */
export interface AddedTokenJson {
  /** Token id (after the BPE vocabulary in Qwen3). */
  id: number;
  /** The exact text of the token. */
  content: string;
  /** Whether the token may only match as a whole word (s³ requires false). */
  single_word: boolean;
  /** Whether whitespace on the left is absorbed (s³ requires false). */
  lstrip: boolean;
  /** Whether whitespace on the right is absorbed (s³ requires false). */
  rstrip: boolean;
  /** Whether the token is matched in the normalized text (true) or the raw text (false). */
  normalized: boolean;
  /** Whether the token is a control token (`<|im_start|>`) rather than ordinary added text (`<think>`). */
  special: boolean;
}

/** A normalizer entry: NFC, or a sequence of them. */
export type NormalizerJson = { type: 'NFC' } | { type: 'Sequence'; normalizers: NormalizerJson[] };

/** A Split pre-tokenizer with an Oniguruma regex. */
export interface SplitPreTokenizerJson {
  type: 'Split';
  pattern: { Regex: string } | { String: string };
  behavior: 'Isolated';
  invert: false;
}

/** The byte-level pre-tokenizer, decoder and post-processor entry. */
export interface ByteLevelJson {
  type: 'ByteLevel';
  add_prefix_space: boolean;
  trim_offsets: boolean;
  use_regex: boolean;
}

/** A pre-tokenizer entry: Split, ByteLevel, or a sequence of them. */
export type PreTokenizerJson =
  | SplitPreTokenizerJson
  | ByteLevelJson
  | { type: 'Sequence'; pretokenizers: PreTokenizerJson[] };

/** The BPE model section. */
export interface BpeModelJson {
  type: 'BPE';
  dropout: null;
  unk_token: string | null;
  continuing_subword_prefix: string | null;
  end_of_word_suffix: string | null;
  fuse_unk: boolean;
  byte_fallback: boolean;
  ignore_merges: boolean;
  /** Byte-level token string to id. */
  vocab: Record<string, number>;
  /** Merge rules in priority order, as pairs or as "left right" strings. */
  merges: Array<[string, string] | string>;
}

/** A whole byte-level BPE tokenizer.json. */
export interface TokenizerJson {
  version: string;
  truncation: null;
  padding: null;
  added_tokens: AddedTokenJson[];
  normalizer: NormalizerJson | null;
  pre_tokenizer: PreTokenizerJson | null;
  post_processor: ByteLevelJson | null;
  decoder: ByteLevelJson | null;
  model: BpeModelJson;
}
