#!/usr/bin/env python3
# PyTorch (CPU, f32) reference timing for a training step, the anchor `swarm bench train` is
# compared against in docs/benchmarks.md: the architecture of bench/torch_qwen3.py on one packed
# sequence of --seq tokens, forward + backward of the SFT loss (mean cross-entropy of every next
# token), then gradient clipping to norm 1 and one torch.optim.AdamW step, all f32. Each decoder
# layer is recomputed in the backward (torch.utils.checkpoint) as the s³ trainer does; without it
# the [heads × T × T] attention tensors of 28 layers do not fit in memory at 2,048 tokens
# (--no-checkpoint turns it off); --bf16 runs the forward and backward under torch.autocast(bfloat16)
# (f32 master weights and AdamW), the anchor of `--precision bf16`; --micro-batches N accumulates the
# gradients of N sequences (each its own tokens, the loss the mean over all) before the step, as
# `swarm bench train --micro-batches N` does. Attention is
# scaled_dot_product_attention (with its own backward) where the torch has it (2.0 on), else explicit
# masked softmax (Debian's 1.13). Run with Debian's interpreter or a venv with a newer CPU torch:
#   OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/torch_qwen3_train.py --shape small --seq 2048
import argparse
import json
import math
import resource
import time

import torch
import torch.utils.checkpoint

from torch_qwen3 import SDPA, SHAPES, Model, rms, rope


def layer(x, pos, s, L):
    T = x.shape[1]
    H, KV, HD = s["heads"], s["kv_heads"], s["head_dim"]
    h = rms(x, L["n1"])
    q = rms((h @ L["q"].T).view(1, T, H, HD), L["qn"]).transpose(1, 2)
    k = rms((h @ L["k"].T).view(1, T, KV, HD), L["kn"]).transpose(1, 2)
    v = (h @ L["v"].T).view(1, T, KV, HD).transpose(1, 2)
    q, k = rope(q, pos), rope(k, pos)
    kk = k.repeat_interleave(H // KV, 1)
    vv = v.repeat_interleave(H // KV, 1)
    if SDPA is not None:
        o = SDPA(q, kk, vv, is_causal=True)
    else:
        att = (q @ kk.transpose(-1, -2)) / math.sqrt(HD)
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        o = att.masked_fill(~mask, float("-inf")).softmax(-1) @ vv
    x = x + (o.transpose(1, 2).reshape(1, T, H * HD)) @ L["o"].T
    h = rms(x, L["n2"])
    return x + (torch.nn.functional.silu(h @ L["gate"].T) * (h @ L["up"].T)) @ L["down"].T


def loss_of(m, ids, checkpoint):
    T = ids.shape[1]
    pos = torch.arange(T)
    x = m.embed[ids]
    for L in m.layers:
        if checkpoint:
            x = torch.utils.checkpoint.checkpoint(layer, x, pos, m.s, L, use_reentrant=False)
        else:
            x = layer(x, pos, m.s, L)
    logits = rms(x, m.norm)[0, :-1] @ m.embed.T  # tied LM head, every position but the last
    return torch.nn.functional.cross_entropy(logits, ids[0, 1:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="small")
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--no-warm-up", action="store_true")
    ap.add_argument("--no-checkpoint", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--micro-batches", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    s = SHAPES[a.shape]
    m = Model(s)
    params = [m.embed, m.norm] + [t for L in m.layers for t in L.values()]
    for p in params:
        p.requires_grad_(True)
    # The fused CPU AdamW where the torch has it (2.4 on); it computes the same update.
    fused = tuple(int(v) for v in torch.__version__.split(".")[:2]) >= (2, 4)
    opt = torch.optim.AdamW(params, lr=1e-6, weight_decay=0.0, **({"fused": True} if fused else {}))
    generator = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, s["vocab"], (1, a.seq), generator=generator) for _ in range(a.micro_batches)]
    times = []
    for r in range(a.repetitions + (0 if a.no_warm_up else 1)):
        t0 = time.perf_counter()
        loss = 0.0
        for ids in batches:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
                part = loss_of(m, ids, not a.no_checkpoint) / a.micro_batches
            part.backward()
            loss += float(part)
        t1 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=False)
        t2 = time.perf_counter()
        if r > 0 or a.no_warm_up:
            times.append((t2 - t0, t1 - t0, t2 - t1))
    times.sort()
    step, fb, optimizer = times[len(times) // 2]
    out = dict(torch=torch.__version__, shape=a.shape, threads=a.threads, tokens=a.seq * a.micro_batches, microBatches=a.micro_batches, checkpoint=not a.no_checkpoint, bf16=a.bf16,
               attention="sdpa" if SDPA is not None else "masked softmax", fusedAdamW=fused,
               medianSeconds=step, forwardBackwardSeconds=fb, optimizerSeconds=optimizer, tokensPerSecond=a.seq * a.micro_batches / step,
               loss=float(loss), peakRssGiB=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
