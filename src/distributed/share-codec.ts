// A rank's share of an update (its micro-batches of training sequences) as one binary buffer, the
// way rank 0 hands it over (rendezvous payloads), instead of JSON: at the paper's scale an update's
// sequences carry tens of millions of tokens, and with score centering 2·K numbers more per token.
// Layout: a 4-byte length, a JSON header (per micro-batch, per sequence: its token count and which
// fields it carries) padded to a multiple of 4 bytes, then every array in header order, 4-byte
// values (tokens and draw tokens Int32, the rest Float32: what Trainer.accumulate converts them to
// anyway, so a decoded share trains to the same bits as the original). Little-endian (the typed
// arrays' order on every platform the addon is built for).
import type { TrainSequence } from '../native/trainer.js';

interface SequenceHeader {
  /** tokens.length (coef and its companions have one fewer). */
  n: number;
  /** Draws per prediction (0: none). */
  k: number;
  old: boolean;
  ref: boolean;
  kl: boolean;
}

export function encodeShare(micros: readonly (readonly TrainSequence[])[]): Buffer {
  const header: SequenceHeader[][] = micros.map((micro) =>
    micro.map((s) => {
      const k = s.draws === undefined ? 0 : s.draws.tokens.length / Math.max(1, s.coef.length);
      return { n: s.tokens.length, k, old: s.oldLogprobs !== undefined, ref: s.refLogprobs !== undefined, kl: s.klWeight !== undefined };
    }),
  );
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const headerEnd = 4 + align4(headerBytes.length);
  let values = 0;
  for (const micro of micros) {
    for (const s of micro) {
      values += s.tokens.length + s.coef.length * (1 + (s.oldLogprobs ? 1 : 0) + (s.refLogprobs ? 1 : 0) + (s.klWeight ? 1 : 0)) + (s.draws ? s.draws.tokens.length * 2 : 0);
    }
  }
  const memory = new ArrayBuffer(headerEnd + 4 * values);
  const out = Buffer.from(memory);
  out.writeUInt32LE(headerBytes.length, 0);
  headerBytes.copy(out, 4);
  let at = headerEnd;
  const put = (Type: Int32ArrayConstructor | Float32ArrayConstructor, xs: ArrayLike<number>): void => {
    new Type(memory, at, xs.length).set(xs);
    at += 4 * xs.length;
  };
  for (const micro of micros) {
    for (const s of micro) {
      put(Int32Array, s.tokens);
      put(Float32Array, s.coef);
      if (s.oldLogprobs) put(Float32Array, s.oldLogprobs);
      if (s.draws) {
        put(Int32Array, s.draws.tokens);
        put(Float32Array, s.draws.logprobs);
      }
      if (s.refLogprobs) put(Float32Array, s.refLogprobs);
      if (s.klWeight) put(Float32Array, s.klWeight);
    }
  }
  return out;
}

const align4 = (n: number): number => (n + 3) & ~3;

export function decodeShare(bytes: Buffer): TrainSequence[][] {
  if (bytes.length < 4) throw new Error('a training share of fewer than 4 bytes');
  const headerLength = bytes.readUInt32LE(0);
  if (4 + headerLength > bytes.length) throw new Error(`a training share whose header (${headerLength} bytes) runs past its ${bytes.length} bytes`);
  const header = JSON.parse(bytes.subarray(4, 4 + headerLength).toString('utf8')) as SequenceHeader[][];
  // The values, copied out 4-byte aligned (a received buffer may start anywhere).
  const body = bytes.subarray(4 + align4(headerLength));
  if (body.length % 4 !== 0) throw new Error(`a training share whose values (${body.length} bytes) are not 4-byte words`);
  const memory = new ArrayBuffer(body.length);
  new Uint8Array(memory).set(body);
  let at = 0;
  const take = (Type: Int32ArrayConstructor | Float32ArrayConstructor, count: number): number[] => {
    if (at + 4 * count > memory.byteLength) throw new Error(`a training share cut short (${memory.byteLength} bytes of values, ${at + 4 * count} needed)`);
    const xs = Array.from(new Type(memory, at, count));
    at += 4 * count;
    return xs;
  };
  const ints = (count: number): number[] => take(Int32Array, count);
  const floats = (count: number): number[] => take(Float32Array, count);
  const micros = header.map((micro) =>
    micro.map((h) => {
      const m = h.n - 1;
      const sequence: { -readonly [K in keyof TrainSequence]: TrainSequence[K] } = { tokens: ints(h.n), coef: floats(m) };
      if (h.old) sequence.oldLogprobs = floats(m);
      if (h.k > 0) sequence.draws = { tokens: ints(m * h.k), logprobs: floats(m * h.k) };
      if (h.ref) sequence.refLogprobs = floats(m);
      if (h.kl) sequence.klWeight = floats(m);
      return sequence;
    }),
  );
  if (at !== memory.byteLength) throw new Error(`a training share with ${memory.byteLength - at} bytes left over`);
  return micros;
}
