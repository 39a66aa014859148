#!/usr/bin/env python3
# PyTorch (CPU) reference timing for the Qwen3 forward pass, the anchor `swarm bench forward`
# and `swarm bench decode` are compared against in docs/benchmarks.md. The same architecture as
# SPEC §10 written with plain torch ops, random weights, the same shapes. --dtype bf16 keeps every
# weight and activation in bfloat16, so the linear layers run PyTorch's own BF16 GEMMs (oneDNN:
# VDPBF16PS or AMX where the CPU has them); attention goes through scaled_dot_product_attention
# where the torch has it (2.0 on), else explicit masked softmax (Debian's 1.13). Run with
# Debian's interpreter (f32) or a venv with a newer CPU torch:
#   OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/torch_qwen3.py --shape qwen3-0.6b --prefill 1x512 --decode 1,8 --context 1024
#   OMP_WAIT_POLICY=PASSIVE python bench/torch_qwen3.py --dtype bf16 --prefill 1x512,4x512 --decode 8,32,64 --context 256
import argparse
import json
import math
import time

import torch

SHAPES = {
    "tiny": dict(hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, mlp=128, vocab=512),
    "small": dict(hidden=256, layers=4, heads=8, kv_heads=4, head_dim=32, mlp=768, vocab=4096),
    "qwen3-0.6b": dict(hidden=1024, layers=28, heads=16, kv_heads=8, head_dim=128, mlp=3072, vocab=151936),
}


def rms(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, pos, theta=1e6):
    hd = x.shape[-1]
    inv = theta ** (-torch.arange(0, hd // 2, dtype=torch.float32) * 2 / hd)
    ang = pos[:, None].float() * inv[None, :]
    cos, sin = torch.cat([ang.cos(), ang.cos()], -1).to(x.dtype), torch.cat([ang.sin(), ang.sin()], -1).to(x.dtype)
    half = torch.cat([-x[..., hd // 2:], x[..., : hd // 2]], -1)
    return x * cos + half * sin


SDPA = getattr(torch.nn.functional, "scaled_dot_product_attention", None)


class Model:
    def __init__(self, s, dtype=torch.float32):
        g = torch.Generator().manual_seed(0)
        r = lambda *shape: (torch.randn(*shape, generator=g) * 0.02).to(dtype)
        self.s = s
        self.embed = r(s["vocab"], s["hidden"])
        self.layers = [
            dict(q=r(s["heads"] * s["head_dim"], s["hidden"]), k=r(s["kv_heads"] * s["head_dim"], s["hidden"]),
                 v=r(s["kv_heads"] * s["head_dim"], s["hidden"]), o=r(s["hidden"], s["heads"] * s["head_dim"]),
                 gate=r(s["mlp"], s["hidden"]), up=r(s["mlp"], s["hidden"]), down=r(s["hidden"], s["mlp"]),
                 n1=torch.ones(s["hidden"], dtype=dtype), n2=torch.ones(s["hidden"], dtype=dtype),
                 qn=torch.ones(s["head_dim"], dtype=dtype), kn=torch.ones(s["head_dim"], dtype=dtype))
            for _ in range(s["layers"])
        ]
        self.norm = torch.ones(s["hidden"], dtype=dtype)

    def forward(self, ids, start, cache, last_only=True):
        # ids: [B, T]; cache: per layer (k, v) [B, KV, start, HD] or None. Returns logits and the new cache.
        s = self.s
        B, T = ids.shape
        H, KV, HD = s["heads"], s["kv_heads"], s["head_dim"]
        pos = torch.arange(start, start + T)
        x = self.embed[ids]
        new_cache = []
        for i, L in enumerate(self.layers):
            h = rms(x, L["n1"])
            q = rms((h @ L["q"].T).view(B, T, H, HD), L["qn"]).transpose(1, 2)
            k = rms((h @ L["k"].T).view(B, T, KV, HD), L["kn"]).transpose(1, 2)
            v = (h @ L["v"].T).view(B, T, KV, HD).transpose(1, 2)
            q, k = rope(q, pos), rope(k, pos)
            if cache is not None:
                k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
            new_cache.append((k, v))
            kk = k.repeat_interleave(H // KV, 1)
            vv = v.repeat_interleave(H // KV, 1)
            S = kk.shape[2]
            mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)
            if SDPA is not None:
                o = SDPA(q, kk, vv, attn_mask=None if S == T else mask, is_causal=S == T)
            else:
                att = (q @ kk.transpose(-1, -2)) / math.sqrt(HD)
                o = att.masked_fill(~mask, float("-inf")).softmax(-1) @ vv
            x = x + (o.transpose(1, 2).reshape(B, T, H * HD)) @ L["o"].T
            h = rms(x, L["n2"])
            x = x + (torch.nn.functional.silu(h @ L["gate"].T) * (h @ L["up"].T)) @ L["down"].T
        x = rms(x[:, -1:] if last_only else x, self.norm)
        return x @ self.embed.T, new_cache


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="qwen3-0.6b")
    ap.add_argument("--prefill", default="1x512", help="BxT,... (empty: no prefill)")
    ap.add_argument("--decode", default="1,8", help="sequences,... (empty: no decode)")
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    ap.add_argument("--repetitions", type=int, default=1, help="timed prefills per shape (median reported)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    s = SHAPES[a.shape]
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float32
    m = Model(s, dtype)
    out = {"torch": torch.__version__, "shape": a.shape, "threads": a.threads, "dtype": a.dtype,
           "attention": "sdpa" if SDPA is not None else "masked softmax", "prefill": [], "decode": []}
    with torch.no_grad():
        m.forward(torch.randint(0, s["vocab"], (1, 16)), 0, None)  # warm-up
        for spec in filter(None, a.prefill.split(",")):  # an empty list skips the section
            B, T = map(int, spec.split("x"))
            ids = torch.randint(0, s["vocab"], (B, T))
            times = []
            for _ in range(a.repetitions):
                t0 = time.perf_counter()
                m.forward(ids, 0, None)
                times.append(time.perf_counter() - t0)
            dt = sorted(times)[len(times) // 2]
            out["prefill"].append(dict(sequences=B, tokens=T, seconds=dt, tokensPerSecond=B * T / dt))
        for B in map(int, filter(None, a.decode.split(","))):
            cache = [(torch.randn(B, s["kv_heads"], a.context, s["head_dim"], dtype=dtype),
                      torch.randn(B, s["kv_heads"], a.context, s["head_dim"], dtype=dtype)) for _ in m.layers]
            ids = torch.randint(0, s["vocab"], (B, 1))
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                m.forward(ids, a.context, cache)
                times.append(time.perf_counter() - t0)
            dt = sorted(times)[1]
            out["decode"].append(dict(sequences=B, context=a.context, seconds=dt, tokensPerSecond=B / dt))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
