// The model shapes `swarm model init` writes: two small test shapes and the two Qwen3 sizes the
// paper trains (SPEC §10), each as the Hugging Face config.json it becomes.
import { ConfigError } from '../errors.js';

/** Names accepted by `swarm model init --shape`. */
export const MODEL_SHAPES = ['tiny', 'small', 's3-mini', 'qwen3-0.6b', 'qwen3-1.7b'] as const;

/** One of MODEL_SHAPES. */
export type ModelShape = (typeof MODEL_SHAPES)[number];

/** The architecture fields of a Qwen3 config.json. */
export interface Qwen3Shape {
  readonly hidden_size: number;
  readonly num_hidden_layers: number;
  readonly num_attention_heads: number;
  readonly num_key_value_heads: number;
  readonly head_dim: number;
  readonly intermediate_size: number;
  readonly vocab_size: number;
}

const SHAPES: Readonly<Record<ModelShape, Qwen3Shape>> = {
  // Issue spec: hidden 64, 2 layers, 4 heads, 2 KV heads, head_dim 16, MLP 128, vocab 512.
  tiny: { hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, intermediate_size: 128, vocab_size: 512 },
  // Issue spec: hidden 256, 4 layers, 8 heads, 4 KV heads, head_dim 32, MLP 768, vocab 4,096.
  small: { hidden_size: 256, num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 4, head_dim: 32, intermediate_size: 768, vocab_size: 4096 },
  // The built-in s3-mini: the `small` architecture with exactly the s3-mini tokenizer's 1,671 ids (assets/s3-mini).
  's3-mini': { hidden_size: 256, num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 4, head_dim: 32, intermediate_size: 768, vocab_size: 1671 },
  // SPEC §10 (Qwen3-0.6B's published config.json).
  'qwen3-0.6b': { hidden_size: 1024, num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128, intermediate_size: 3072, vocab_size: 151936 },
  // SPEC §10 (Qwen3-1.7B's published config.json).
  'qwen3-1.7b': { hidden_size: 2048, num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128, intermediate_size: 6144, vocab_size: 151936 },
};

/** The shape named `name`, or a ConfigError listing the known shapes. */
export function modelShape(name: string): Qwen3Shape {
  if (!(MODEL_SHAPES as readonly string[]).includes(name)) {
    throw new ConfigError(`--shape must be one of ${MODEL_SHAPES.join(', ')}; got "${name}"`);
  }
  return SHAPES[name as ModelShape];
}

/** The complete config.json of a shape: tied embeddings, RoPE θ 1e6, RMSNorm ε 1e-6, 40,960 positions. */
export function qwen3ConfigJson(options: { shape: Qwen3Shape; torchDtype: string; eosTokenId?: number; bosTokenId?: number }): Record<string, unknown> {
  return {
    architectures: ['Qwen3ForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    ...(options.bosTokenId !== undefined ? { bos_token_id: options.bosTokenId } : {}),
    ...(options.eosTokenId !== undefined ? { eos_token_id: options.eosTokenId } : {}),
    head_dim: options.shape.head_dim,
    hidden_act: 'silu',
    hidden_size: options.shape.hidden_size,
    initializer_range: 0.02,
    intermediate_size: options.shape.intermediate_size,
    max_position_embeddings: 40960,
    max_window_layers: options.shape.num_hidden_layers,
    model_type: 'qwen3',
    num_attention_heads: options.shape.num_attention_heads,
    num_hidden_layers: options.shape.num_hidden_layers,
    num_key_value_heads: options.shape.num_key_value_heads,
    rms_norm_eps: 1e-6,
    rope_scaling: null,
    rope_theta: 1000000,
    sliding_window: null,
    tie_word_embeddings: true,
    torch_dtype: options.torchDtype,
    use_cache: true,
    use_sliding_window: false,
    vocab_size: options.shape.vocab_size,
  };
}
