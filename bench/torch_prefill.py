"""Prefill of 32 x 2,048 tokens on a random Qwen3-0.6B in PyTorch on the GPU: the anchor of the CUDA
prefill benchmark (bench/cuda_inference_bench.cpp). The same architecture from transformers'
Qwen3ForCausalLM in bf16 with SDPA attention (flash kernels), logits of each sequence's last token
only, as the engine computes them. Prints one JSON object.

    python3 bench/torch_prefill.py [--sequences 32] [--tokens 2048] [--repetitions 5]
"""
import argparse
import json
import time

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM


def qwen3_06b() -> Qwen3Config:
    return Qwen3Config(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                       num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                       rope_theta=1e6, rms_norm_eps=1e-6, tie_word_embeddings=True, attention_bias=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sequences", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Qwen3ForCausalLM._from_config(qwen3_06b(), attn_implementation="sdpa", torch_dtype=torch.bfloat16).cuda().eval()
    ids = torch.randint(0, 151936, (args.sequences, args.tokens), device="cuda")
    times = []
    with torch.inference_mode():
        for r in range(args.repetitions + 1):
            torch.cuda.synchronize()
            start = time.perf_counter()
            hidden = model.model(input_ids=ids).last_hidden_state[:, -1]
            model.lm_head(hidden)
            torch.cuda.synchronize()
            if r > 0:
                times.append(time.perf_counter() - start)
    times.sort()
    seconds = times[len(times) // 2]
    print(json.dumps({"sequences": args.sequences, "tokens": args.tokens, "seconds": seconds,
                      "tokensPerSecond": args.sequences * args.tokens / seconds, "torch": torch.__version__,
                      "attention": "sdpa", "dtype": "bfloat16"}))


if __name__ == "__main__":
    main()
