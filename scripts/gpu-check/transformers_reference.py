"""Reference logits for the CUDA cross-check (native/tests/test_cuda_transformers.cpp): a randomly
initialised transformers Qwen3ForCausalLM saved with save_pretrained (bf16 safetensors), and beside it
reference.safetensors holding the token ids and the logits transformers computes for them on the GPU
in bf16 and in f32 (the same bf16 weights cast up; TF32 off). An implementation nobody here wrote.

    python3 scripts/gpu-check/transformers_reference.py OUT_DIR small|qwen3-0.6b
    S3_REFERENCE_DEVICE=cpu python3 ...   # the same on the CPU
"""
import os
import sys

import torch
from safetensors.torch import save_file
from transformers import Qwen3Config, Qwen3ForCausalLM

SHAPES = {
    # The project's `small` shape (src/model/shapes.ts).
    "small": dict(vocab_size=4096, hidden_size=256, intermediate_size=768, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=4, head_dim=32),
    # Qwen3-0.6B's published config.
    "qwen3-0.6b": dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                       num_attention_heads=16, num_key_value_heads=8, head_dim=128),
}


DEVICE = os.environ.get("S3_REFERENCE_DEVICE", "cuda")


def main() -> None:
    out, shape = sys.argv[1], sys.argv[2]
    torch.manual_seed(1234)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    config = Qwen3Config(**SHAPES[shape], max_position_embeddings=40960, rope_theta=1e6, rms_norm_eps=1e-6,
                         tie_word_embeddings=True, attention_bias=False, torch_dtype="bfloat16")
    model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    # Norm weights away from 1 so a wrong norm cannot hide.
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "norm" in name:
                parameter.copy_(1.0 + 0.1 * torch.randn_like(parameter.float()))
    model.save_pretrained(out, safe_serialization=True)
    ids = torch.randint(0, config.vocab_size, (1, 96))
    # Each dtype's logits from the saved folder loaded in it, as a user loads it: casting the bf16 model
    # with .float() would keep RoPE's inverse frequencies (a buffer) rounded to bf16, errors that grow
    # with the position.
    with torch.inference_mode():
        logits = {}
        for name, dtype in (("bf16", torch.bfloat16), ("f32", torch.float32)):
            loaded = Qwen3ForCausalLM.from_pretrained(out, torch_dtype=dtype).to(DEVICE).eval()
            logits[name] = loaded(input_ids=ids.to(DEVICE)).logits[0].float().cpu()
    bf16, f32 = logits["bf16"], logits["f32"]
    save_file({"ids": ids[0].to(torch.int32).contiguous(), "logits_bf16": bf16.contiguous(), "logits_f32": f32.contiguous()},
              f"{out}/reference.safetensors")
    print(f"{out}: {shape}, {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, {ids.shape[1]} ids")


if __name__ == "__main__":
    main()
