// The BPE merge step: turns the byte tokens of one pre-token into vocabulary tokens by applying
// the merge with the lowest rank first (leftmost among equals), as Hugging Face's Rust BPE does.
// A binary heap over (rank, position) keeps long pre-tokens (runs of spaces, long words) linear-ish.

import { FormatError } from '../../errors.js';
import { PairTable } from './pair-table.js';

/** Vocabulary and merge rules a merger is built from. */
export interface BpeMergerOptions {
  /** Byte-level token string to id. */
  vocab: ReadonlyMap<string, number>;
  /** Merge rules; the index is the rank (lower merges first). */
  merges: ReadonlyArray<readonly [string, string]>;
  /** Where the rules come from, for error messages. */
  source: string;
}

// Heap keys pack rank * 2^32 + position into one exactly representable double.
const POSITION_SPAN = 2 ** 32;
const MAX_MERGES = 2 ** 21;

/** Applies BPE merges to sequences of token ids. */
export class BpeMerger {
  private readonly ranks: PairTable;
  private readonly mergedIds: Int32Array;
  private symbols = new Int32Array(64);
  private previous = new Int32Array(64);
  private following = new Int32Array(64);
  private heap = new Float64Array(256);

  constructor(options: BpeMergerOptions) {
    const { vocab, merges, source } = options;
    if (merges.length >= MAX_MERGES) {
      throw new FormatError(`${source}: model.merges has ${merges.length} rules; at most ${MAX_MERGES - 1} are supported`);
    }
    this.ranks = new PairTable(merges.length);
    this.mergedIds = new Int32Array(merges.length);
    merges.forEach(([left, right], rank) => {
      // A later duplicate of a rule replaces the earlier one, as in the reference implementation.
      this.ranks.set(vocab.get(left) as number, vocab.get(right) as number, rank);
      this.mergedIds[rank] = vocab.get(left + right) as number;
    });
  }

  /** The rank of the merge of two tokens, or -1 when they do not merge. */
  rank(left: number, right: number): number {
    return this.ranks.get(left, right);
  }

  /** Merges a pre-token's byte tokens into vocabulary tokens. */
  merge(tokens: ArrayLike<number>): number[] {
    const length = tokens.length;
    if (length < 2) return Array.from(tokens);
    this.reserve(length);
    const { symbols, previous, following, mergedIds } = this;
    let heapSize = 0;
    const push = (rank: number, position: number): void => {
      const heap = this.heap;
      let child = heapSize++;
      const key = rank * POSITION_SPAN + position;
      while (child > 0) {
        const parent = (child - 1) >> 1;
        if (heap[parent] <= key) break;
        heap[child] = heap[parent];
        child = parent;
      }
      heap[child] = key;
    };
    const pop = (): number => {
      const heap = this.heap;
      const top = heap[0];
      const last = heap[--heapSize];
      let parent = 0;
      for (;;) {
        let child = 2 * parent + 1;
        if (child >= heapSize) break;
        if (child + 1 < heapSize && heap[child + 1] < heap[child]) child += 1;
        if (heap[child] >= last) break;
        heap[parent] = heap[child];
        parent = child;
      }
      heap[parent] = last;
      return top;
    };
    for (let i = 0; i < length; i++) {
      symbols[i] = tokens[i];
      previous[i] = i - 1;
      following[i] = i + 1 < length ? i + 1 : -1;
    }
    for (let i = 0; i + 1 < length; i++) {
      const rank = this.ranks.get(symbols[i], symbols[i + 1]);
      if (rank >= 0) push(rank, i);
    }
    while (heapSize > 0) {
      const key = pop();
      const rank = Math.floor(key / POSITION_SPAN);
      const position = key - rank * POSITION_SPAN;
      const right = following[position];
      // Skip entries made stale by an earlier merge at or next to this position.
      if (symbols[position] < 0 || right < 0 || this.ranks.get(symbols[position], symbols[right]) !== rank) continue;
      symbols[position] = mergedIds[rank];
      symbols[right] = -1;
      const afterRight = following[right];
      following[position] = afterRight;
      if (afterRight >= 0) previous[afterRight] = position;
      const before = previous[position];
      if (before >= 0) {
        const leftRank = this.ranks.get(symbols[before], symbols[position]);
        if (leftRank >= 0) push(leftRank, before);
      }
      if (afterRight >= 0) {
        const rightRank = this.ranks.get(symbols[position], symbols[afterRight]);
        if (rightRank >= 0) push(rightRank, position);
      }
    }
    const merged: number[] = [];
    for (let i = 0; i >= 0; i = following[i]) merged.push(symbols[i]);
    return merged;
  }

  // Each merge pushes at most two entries, so the heap never holds more than 3 × length keys.
  private reserve(length: number): void {
    if (this.symbols.length < length) {
      const capacity = Math.max(length, this.symbols.length * 2);
      this.symbols = new Int32Array(capacity);
      this.previous = new Int32Array(capacity);
      this.following = new Int32Array(capacity);
    }
    if (this.heap.length < 3 * length) this.heap = new Float64Array(Math.max(3 * length, this.heap.length * 2));
  }
}
