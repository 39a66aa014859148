#!/usr/bin/env python3
"""PyTorch's training step on the GPU, the anchor of bench/cuda_train_bench.cpp in the GPU check
(scripts/gpu-check.sh): a randomly initialised transformers Qwen3ForCausalLM of the Qwen3-0.6B config
with f32 master weights, 8 sequences × 4,096 tokens, the mean next-token cross-entropy under
torch.autocast(bfloat16) with SDPA attention, backward, gradient clipping to norm 1 and a fused
torch.optim.AdamW step, one untimed step then the median of three. FLOPs per token use our formula
(native/bench/train_bench.h) so the TFLOP/s compare directly. Beside it, the best of twenty
8,192³ BF16 matmuls (cuBLAS through torch.matmul) as "bf16GemmTflops": the dense BF16 rate this GPU
reaches in practice, a second anchor for the MFU the GPU check reports against the datasheet peak.

    python3 bench/torch_train_step.py [--quick] > torch-train.json     (--quick: 2 × 1,024 tokens)
"""
import json
import sys
import time

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

CONFIG = dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
              num_key_value_heads=8, head_dim=128)


def flops_per_token(c: dict, T: int) -> float:
    C, I, L = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    q_dim, kv_dim = c["num_attention_heads"] * c["head_dim"], c["num_key_value_heads"] * c["head_dim"]
    layer = C * (q_dim + 2 * kv_dim) + q_dim * C + 3 * C * I
    return 6.0 * (L * layer + c["vocab_size"] * C) + 12.0 * L * T * q_dim / 2.0


def bf16_gemm_tflops(n: int) -> float:
    """The best TFLOP/s of twenty n × n × n BF16 matmuls after three untimed ones, timed with CUDA events."""
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        torch.matmul(a, b)
    best = float("inf")
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    return 2.0 * n ** 3 / best / 1e12


def main() -> None:
    quick = "--quick" in sys.argv
    sequences, length = (2, 1024) if quick else (8, 4096)
    torch.manual_seed(0)
    gemm_n = 4096 if quick else 8192
    gemm_tflops = bf16_gemm_tflops(gemm_n)
    torch.cuda.reset_peak_memory_stats()  # the GEMM's operands are freed: peakMemoryGiB is the training's
    config = Qwen3Config(**CONFIG, max_position_embeddings=40960, rope_theta=1e6, rms_norm_eps=1e-6, tie_word_embeddings=True,
                         attention_bias=False)
    config._attn_implementation = "sdpa"
    model = Qwen3ForCausalLM(config).cuda().float().train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, fused=True)
    ids = torch.randint(0, config.vocab_size, (sequences, length), device="cuda")
    times, losses = [], []
    for step in range(4):
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=ids).logits
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].float().reshape(-1, config.vocab_size), ids[:, 1:].reshape(-1))
        loss.backward()
        del logits
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if step > 0:
            times.append(time.perf_counter() - start)
            losses.append(loss.item())
    median = sorted(times)[len(times) // 2]
    tokens = sequences * length
    per_token = flops_per_token(CONFIG, length)
    print(json.dumps({
        "model": "qwen3-0.6b (transformers, random weights, f32 master weights, bf16 autocast, SDPA, fused AdamW)",
        "torch": torch.__version__, "device": torch.cuda.get_device_name(), "sequences": sequences, "tokens": tokens,
        "medianSeconds": median, "bestSeconds": min(times), "tokensPerSecond": tokens / median, "flopsPerToken": per_token,
        "tflops": tokens / median * per_token / 1e12, "loss": losses[-1],
        "peakMemoryGiB": torch.cuda.max_memory_allocated() / 2**30,
        "bf16GemmTflops": gemm_tflops, "bf16GemmShape": gemm_n,
    }))


if __name__ == "__main__":
    main()
