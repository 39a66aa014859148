// The deterministic byte-level BPE trainer that makes s3-mini's tokenizer.json: Qwen3's normalizer,
// split regex, byte alphabet and added tokens, with merges learned from a task corpus. The most
// frequent adjacent pair is merged first; ties go to the pair whose left token, then right token,
// sorts first (UTF-16 code units of the byte-level spelling), so the same corpus gives the same file.

import { ConfigError } from '../../errors.js';
import { AddedTokenSplitter } from './added-token-splitter.js';
import { BYTE_LEVEL_ORDER, BYTE_TO_CHAR, bytesToByteLevel } from './byte-level.js';
import { preTokenize } from './pre-tokenize.js';
import { QWEN3_ADDED_TOKENS, QWEN3_SPLIT_PATTERN, type AddedTokenDefinition } from './qwen3-format.js';
import { compileSplitPattern } from './split-pattern.js';
import type { ByteLevelJson, TokenizerJson } from './tokenizer-json.js';

/** What to train on and how large the result may be. */
export interface TrainByteLevelBpeOptions {
  /** Training texts; occurrences of the added tokens are cut out before counting. */
  corpus: Iterable<string>;
  /** Total number of ids: 256 byte tokens + learned merges + added tokens. */
  vocabSize: number;
  /** Added tokens placed after the BPE vocabulary (default: Qwen3's 26, in Qwen3's order). */
  addedTokens?: readonly AddedTokenDefinition[];
}

// Pair keys pack left * 2^20 + right, so token ids must stay below 2^20.
const KEY_SPAN = 2 ** 20;
const BYTE_LEVEL: ByteLevelJson = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };

interface PairStats {
  left: number;
  right: number;
  count: number;
  /** Indices of words that contained the pair when it was counted (may hold stale entries). */
  words: number[];
}

interface HeapEntry {
  count: number;
  key: number;
}

/** Trains a byte-level BPE tokenizer.json in Qwen3's format; the same inputs give the same output. */
export function trainByteLevelBpe(options: TrainByteLevelBpeOptions): TokenizerJson {
  const addedTokens = options.addedTokens ?? QWEN3_ADDED_TOKENS;
  const bpeSize = options.vocabSize - addedTokens.length;
  if (!Number.isInteger(options.vocabSize) || bpeSize < 256 || options.vocabSize > KEY_SPAN) {
    throw new ConfigError(
      `trainByteLevelBpe: vocabSize is ${options.vocabSize}; expected an integer from ${256 + addedTokens.length} ` +
        `(256 byte tokens + ${addedTokens.length} added tokens) to ${KEY_SPAN}`,
    );
  }
  const tokens = BYTE_LEVEL_ORDER.map((byte) => BYTE_TO_CHAR[byte]);
  const trainer = new MergeTrainer({ words: countWords(options.corpus, addedTokens), tokens });
  const merges = trainer.train(bpeSize);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens.map((token, index) => ({
      id: tokens.length + index,
      content: token.content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: token.special,
    })),
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: QWEN3_SPLIT_PATTERN }, behavior: 'Isolated', invert: false },
        BYTE_LEVEL,
      ],
    },
    post_processor: BYTE_LEVEL,
    decoder: BYTE_LEVEL,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(tokens.map((token, id) => [token, id])),
      merges,
    },
  };
}

// Pre-token counts over the corpus, spelled in the byte-level alphabet, in first-seen order.
function countWords(corpus: Iterable<string>, addedTokens: readonly AddedTokenDefinition[]): Map<string, number> {
  const splitter = new AddedTokenSplitter(new Map(addedTokens.map((token, index) => [token.content, index])));
  const pattern = compileSplitPattern({ pattern: QWEN3_SPLIT_PATTERN, source: 'trainByteLevelBpe', field: 'QWEN3_SPLIT_PATTERN' });
  const counts = new Map<string, number>();
  for (const text of corpus) {
    for (const segment of splitter.split(text)) {
      if (segment.addedTokenId !== undefined) continue;
      for (const piece of preTokenize(segment.text.normalize('NFC'), [pattern])) {
        counts.set(piece, (counts.get(piece) ?? 0) + 1);
      }
    }
  }
  const utf8 = new TextEncoder();
  const words = new Map<string, number>();
  for (const [piece, count] of counts) words.set(bytesToByteLevel(utf8.encode(piece)), count);
  return words;
}

interface MergeTrainerOptions {
  /** Byte-level word spellings with their counts. */
  words: Map<string, number>;
  /** The token list, starting with the 256 byte tokens; learned tokens are appended. */
  tokens: string[];
}

class MergeTrainer {
  private readonly tokens: string[];
  private readonly ids = new Map<string, number>();
  private readonly symbols: number[][] = [];
  private readonly frequencies: number[] = [];
  private readonly pairs = new Map<number, PairStats>();
  private readonly heap: HeapEntry[] = [];
  private readonly visited: Int32Array;
  private round = 0;

  constructor(options: MergeTrainerOptions) {
    this.tokens = options.tokens;
    this.tokens.forEach((token, id) => this.ids.set(token, id));
    for (const [word, count] of options.words) {
      const index = this.symbols.length;
      this.symbols.push(Array.from(word, (char) => this.ids.get(char) as number));
      this.frequencies.push(count);
      this.countPairs(index, 1);
    }
    this.visited = new Int32Array(this.symbols.length).fill(-1);
    for (const [key, stats] of this.pairs) this.heapPush({ count: stats.count, key });
  }

  /** Learns merges until the vocabulary holds `bpeSize` tokens or no pair occurs twice. */
  train(bpeSize: number): Array<[string, string]> {
    const merges: Array<[string, string]> = [];
    while (this.tokens.length < bpeSize) {
      const best = this.popBest();
      if (best === undefined || best.count < 2) break;
      const merged = this.tokens[best.left] + this.tokens[best.right];
      // A spelling reached by two different merges keeps one id, as in Hugging Face's trainer.
      let mergedId = this.ids.get(merged);
      if (mergedId === undefined) {
        mergedId = this.tokens.length;
        this.tokens.push(merged);
        this.ids.set(merged, mergedId);
      }
      merges.push([this.tokens[best.left], this.tokens[best.right]]);
      this.applyMerge(best, mergedId);
    }
    return merges;
  }

  private applyMerge(pair: PairStats, mergedId: number): void {
    this.round += 1;
    const changed = new Set<number>();
    for (const index of pair.words) {
      if (this.visited[index] === this.round) continue;
      this.visited[index] = this.round;
      const word = this.symbols[index];
      const next: number[] = [];
      for (let i = 0; i < word.length; i++) {
        if (i + 1 < word.length && word[i] === pair.left && word[i + 1] === pair.right) {
          next.push(mergedId);
          i += 1;
        } else next.push(word[i]);
      }
      if (next.length === word.length) continue;
      this.countPairs(index, -1, changed);
      this.symbols[index] = next;
      this.countPairs(index, 1, changed, mergedId);
    }
    for (const key of changed) {
      const stats = this.pairs.get(key) as PairStats;
      if (stats.count > 0) this.heapPush({ count: stats.count, key });
    }
  }

  // Adds (sign 1) or removes (sign -1) a word's pairs; records the word under pairs that contain `onlyId`.
  private countPairs(index: number, sign: 1 | -1, changed?: Set<number>, onlyId?: number): void {
    const word = this.symbols[index];
    const weight = sign * this.frequencies[index];
    for (let i = 0; i + 1 < word.length; i++) {
      const key = word[i] * KEY_SPAN + word[i + 1];
      let stats = this.pairs.get(key);
      if (stats === undefined) {
        stats = { left: word[i], right: word[i + 1], count: 0, words: [] };
        this.pairs.set(key, stats);
      }
      stats.count += weight;
      if (sign > 0 && (onlyId === undefined || word[i] === onlyId || word[i + 1] === onlyId)) stats.words.push(index);
      changed?.add(key);
    }
  }

  private popBest(): PairStats | undefined {
    while (this.heap.length > 0) {
      const top = this.heapPop();
      const stats = this.pairs.get(top.key) as PairStats;
      // Entries are pushed on every count change; only the one matching the current count is live.
      if (stats.count === top.count) return stats;
    }
    return undefined;
  }

  // Heap order: higher count first, then the pair whose left then right token spelling sorts first.
  private before(a: HeapEntry, b: HeapEntry): boolean {
    if (a.count !== b.count) return a.count > b.count;
    const pa = this.pairs.get(a.key) as PairStats;
    const pb = this.pairs.get(b.key) as PairStats;
    const la = this.tokens[pa.left];
    const lb = this.tokens[pb.left];
    if (la !== lb) return la < lb;
    return this.tokens[pa.right] < this.tokens[pb.right];
  }

  private heapPush(entry: HeapEntry): void {
    const heap = this.heap;
    let child = heap.length;
    heap.push(entry);
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.before(entry, heap[parent])) break;
      heap[child] = heap[parent];
      child = parent;
    }
    heap[child] = entry;
  }

  private heapPop(): HeapEntry {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop() as HeapEntry;
    if (heap.length === 0) return top;
    let parent = 0;
    for (;;) {
      let child = 2 * parent + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && this.before(heap[child + 1], heap[child])) child += 1;
      if (!this.before(heap[child], last)) break;
      heap[parent] = heap[child];
      parent = child;
    }
    heap[parent] = last;
    return top;
  }
}
