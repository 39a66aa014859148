// An open-addressing hash table from a pair of token ids to an integer, kept in typed arrays so
// that BPE encoding and training look pairs up without allocating keys.

const EMPTY = -1;

/** Maps (left id, right id) to a non-negative integer; missing pairs read as -1. */
export class PairTable {
  private lefts: Int32Array;
  private rights: Int32Array;
  private values: Int32Array;
  private mask: number;
  private count = 0;

  /** Creates a table sized for about `expectedPairs` entries without growing. */
  constructor(expectedPairs = 16) {
    let capacity = 16;
    while (capacity < expectedPairs * 2) capacity *= 2;
    this.lefts = new Int32Array(capacity).fill(EMPTY);
    this.rights = new Int32Array(capacity);
    this.values = new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  /** Number of pairs stored. */
  get size(): number {
    return this.count;
  }

  private slot(left: number, right: number): number {
    let slot = (Math.imul(left, 0x9e3779b1) ^ Math.imul(right + 0x7f4a7c15, 0x85ebca77)) & this.mask;
    while (this.lefts[slot] !== EMPTY && (this.lefts[slot] !== left || this.rights[slot] !== right)) {
      slot = (slot + 1) & this.mask;
    }
    return slot;
  }

  /** The value stored for the pair, or -1. */
  get(left: number, right: number): number {
    const slot = this.slot(left, right);
    return this.lefts[slot] === EMPTY ? -1 : this.values[slot];
  }

  /** Stores a non-negative value for the pair, replacing any earlier one. */
  set(left: number, right: number, value: number): void {
    const slot = this.slot(left, right);
    if (this.lefts[slot] === EMPTY) {
      this.lefts[slot] = left;
      this.rights[slot] = right;
      this.count += 1;
    }
    this.values[slot] = value;
    if (this.count * 2 > this.mask) this.grow();
  }

  /** Adds `delta` to the pair's value (absent pairs start at 0) and returns the new value. */
  add(left: number, right: number, delta: number): number {
    const current = this.get(left, right);
    const next = (current < 0 ? 0 : current) + delta;
    this.set(left, right, next);
    return next;
  }

  private grow(): void {
    const { lefts, rights, values } = this;
    this.lefts = new Int32Array(lefts.length * 2).fill(EMPTY);
    this.rights = new Int32Array(lefts.length * 2);
    this.values = new Int32Array(lefts.length * 2);
    this.mask = lefts.length * 2 - 1;
    for (let slot = 0; slot < lefts.length; slot++) {
      if (lefts[slot] === EMPTY) continue;
      const target = this.slot(lefts[slot], rights[slot]);
      this.lefts[target] = lefts[slot];
      this.rights[target] = rights[slot];
      this.values[target] = values[slot];
    }
  }
}
