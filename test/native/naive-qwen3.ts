// An independent Qwen3 reference for tests: reads a checkpoint folder (config.json + one
// model.safetensors in F32 or BF16) with its own tiny safetensors parser and computes every
// position's logits with plain loops in double precision, straight from SPEC §10. With
// bf16LinearInputs it rounds the input of every linear layer whose weight is stored in BF16 to BF16
// (RNE), as the avx512bf16 level's matmul does (docs/determinism.md).
import fs from 'node:fs';
import path from 'node:path';

interface Config {
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  intermediate_size: number;
  vocab_size: number;
  rope_theta: number;
  rms_norm_eps: number;
  tie_word_embeddings: boolean;
}

/** Rounds to the nearest BF16 value (ties to even) through f32, as the kernels round f32 activations. */
function roundToBf16(value: number): number {
  const bits = new Uint32Array(new Float32Array([value]).buffer)[0];
  const rounded = (bits + 0x7fff + ((bits >>> 16) & 1)) & 0xffff0000;
  return new Float32Array(new Uint32Array([rounded >>> 0]).buffer)[0];
}

/** Names of the tensors stored as BF16. */
const bf16Tensors = new WeakMap<Map<string, Float64Array>, Set<string>>();

/** Reads every tensor of a single-file checkpoint as f64. */
function readTensors(file: string): Map<string, Float64Array> {
  const bytes = fs.readFileSync(file);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, { dtype: string; data_offsets: [number, number] }>;
  const base = 8 + headerLength;
  const tensors = new Map<string, Float64Array>();
  const bf16 = new Set<string>();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [begin, end] = info.data_offsets;
    const raw = bytes.subarray(base + begin, base + end);
    const out = new Float64Array(info.dtype === 'F32' ? raw.length / 4 : raw.length / 2);
    for (let i = 0; i < out.length; i += 1) {
      out[i] = info.dtype === 'F32' ? raw.readFloatLE(4 * i) : new Float32Array(new Uint32Array([raw.readUInt16LE(2 * i) << 16]).buffer)[0];
    }
    tensors.set(name, out);
    if (info.dtype === 'BF16') bf16.add(name);
  }
  bf16Tensors.set(tensors, bf16);
  return tensors;
}

function linearProduct(w: Float64Array, x: Float64Array, outDim: number): Float64Array {
  const inDim = x.length;
  const y = new Float64Array(outDim);
  for (let o = 0; o < outDim; o += 1) {
    let s = 0;
    for (let i = 0; i < inDim; i += 1) s += w[o * inDim + i] * x[i];
    y[o] = s;
  }
  return y;
}

function rmsnorm(x: Float64Array, weight: Float64Array, eps: number): Float64Array {
  const size = weight.length;
  const y = new Float64Array(x.length);
  for (let g = 0; g < x.length; g += size) {
    let ss = 0;
    for (let i = 0; i < size; i += 1) ss += x[g + i] * x[g + i];
    const scale = 1 / Math.sqrt(ss / size + eps);
    for (let i = 0; i < size; i += 1) y[g + i] = x[g + i] * scale * weight[i];
  }
  return y;
}

function rope(x: Float64Array, headDim: number, position: number, theta: number): void {
  const half = headDim / 2;
  for (let h = 0; h < x.length; h += headDim) {
    for (let j = 0; j < half; j += 1) {
      const angle = position * Math.pow(theta, (-2 * j) / headDim);
      const a = x[h + j], b = x[h + j + half];
      x[h + j] = a * Math.cos(angle) - b * Math.sin(angle);
      x[h + j + half] = b * Math.cos(angle) + a * Math.sin(angle);
    }
  }
}

/** Logits [T][V] of one sequence whose token t sits at rotary position startPos + t. */
export function naiveQwen3Logits(options: { directory: string; ids: readonly number[]; startPos?: number; bf16LinearInputs?: boolean }): Float64Array[] {
  const c = JSON.parse(fs.readFileSync(path.join(options.directory, 'config.json'), 'utf8')) as Config;
  const w = readTensors(path.join(options.directory, 'model.safetensors'));
  const get = (name: string): Float64Array => {
    const t = w.get(name);
    if (!t) throw new Error(`missing ${name}`);
    return t;
  };
  const stored16 = bf16Tensors.get(w) as Set<string>;
  const linear = (name: string, x: Float64Array, outDim: number): Float64Array =>
    linearProduct(get(name), options.bf16LinearInputs === true && stored16.has(name) ? x.map(roundToBf16) : x, outDim);
  const C = c.hidden_size, NH = c.num_attention_heads, NKV = c.num_key_value_heads, HD = c.head_dim, T = options.ids.length;
  const embed = get('model.embed_tokens.weight');
  let x = options.ids.map((id) => embed.slice(id * C, (id + 1) * C));
  for (let l = 0; l < c.num_hidden_layers; l += 1) {
    const p = `model.layers.${l}.`;
    const q: Float64Array[] = [], k: Float64Array[] = [], v: Float64Array[] = [];
    for (let t = 0; t < T; t += 1) {
      const h = rmsnorm(x[t], get(p + 'input_layernorm.weight'), c.rms_norm_eps);
      q.push(rmsnorm(linear(p + 'self_attn.q_proj.weight', h, NH * HD), get(p + 'self_attn.q_norm.weight'), c.rms_norm_eps));
      k.push(rmsnorm(linear(p + 'self_attn.k_proj.weight', h, NKV * HD), get(p + 'self_attn.k_norm.weight'), c.rms_norm_eps));
      v.push(linear(p + 'self_attn.v_proj.weight', h, NKV * HD));
      rope(q[t], HD, (options.startPos ?? 0) + t, c.rope_theta);
      rope(k[t], HD, (options.startPos ?? 0) + t, c.rope_theta);
    }
    x = x.map((xt, t) => {
      const attn = new Float64Array(NH * HD);
      for (let h = 0; h < NH; h += 1) {
        const g = Math.floor(h / (NH / NKV));
        const scores = Array.from({ length: t + 1 }, (_, s) => {
          let dot = 0;
          for (let d = 0; d < HD; d += 1) dot += q[t][h * HD + d] * k[s][g * HD + d];
          return dot / Math.sqrt(HD);
        });
        const max = Math.max(...scores);
        const total = scores.reduce((sum, score) => sum + Math.exp(score - max), 0);
        scores.forEach((score, s) => {
          for (let d = 0; d < HD; d += 1) attn[h * HD + d] += (Math.exp(score - max) / total) * v[s][g * HD + d];
        });
      }
      const projected = linear(p + 'self_attn.o_proj.weight', attn, C);
      const afterAttention = xt.map((value, i) => value + projected[i]);
      const h2 = rmsnorm(afterAttention, get(p + 'post_attention_layernorm.weight'), c.rms_norm_eps);
      const gate = linear(p + 'mlp.gate_proj.weight', h2, c.intermediate_size);
      const up = linear(p + 'mlp.up_proj.weight', h2, c.intermediate_size);
      const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]);
      const down = linear(p + 'mlp.down_proj.weight', act, C);
      return afterAttention.map((value, i) => value + down[i]);
    });
  }
  const head = c.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
  return x.map((xt) => linear(head, rmsnorm(xt, get('model.norm.weight'), c.rms_norm_eps), c.vocab_size));
}
