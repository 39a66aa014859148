#!/usr/bin/env python3
# PyTorch (CPU, f32) reference timing for the Qwen3 forward pass, the anchor `swarm bench forward`
# and `swarm bench decode` are compared against in docs/benchmarks.md. The same architecture as
# SPEC §10 written with plain torch ops (torch 1.13 from Debian: no scaled_dot_product_attention),
# random weights, the same shapes. Run with Debian's interpreter:
#   OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/torch_qwen3.py --shape qwen3-0.6b --prefill 1x512 --decode 1,8 --context 1024
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
    cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)
    half = torch.cat([-x[..., hd // 2:], x[..., : hd // 2]], -1)
    return x * cos + half * sin


class Model:
    def __init__(self, s):
        g = torch.Generator().manual_seed(0)
        r = lambda *shape: torch.randn(*shape, generator=g) * 0.02
        self.s = s
        self.embed = r(s["vocab"], s["hidden"])
        self.layers = [
            dict(q=r(s["heads"] * s["head_dim"], s["hidden"]), k=r(s["kv_heads"] * s["head_dim"], s["hidden"]),
                 v=r(s["kv_heads"] * s["head_dim"], s["hidden"]), o=r(s["hidden"], s["heads"] * s["head_dim"]),
                 gate=r(s["mlp"], s["hidden"]), up=r(s["mlp"], s["hidden"]), down=r(s["hidden"], s["mlp"]),
                 n1=torch.ones(s["hidden"]), n2=torch.ones(s["hidden"]), qn=torch.ones(s["head_dim"]), kn=torch.ones(s["head_dim"]))
            for _ in range(s["layers"])
        ]
        self.norm = torch.ones(s["hidden"])

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
            att = (q @ kk.transpose(-1, -2)) / math.sqrt(HD)
            S = kk.shape[2]
            mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)
            att = att.masked_fill(~mask, float("-inf")).softmax(-1)
            x = x + ((att @ vv).transpose(1, 2).reshape(B, T, H * HD)) @ L["o"].T
            h = rms(x, L["n2"])
            x = x + (torch.nn.functional.silu(h @ L["gate"].T) * (h @ L["up"].T)) @ L["down"].T
        x = rms(x[:, -1:] if last_only else x, self.norm)
        return x @ self.embed.T, new_cache


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="qwen3-0.6b")
    ap.add_argument("--prefill", default="1x512")
    ap.add_argument("--decode", default="1,8")
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    s = SHAPES[a.shape]
    m = Model(s)
    out = {"torch": torch.__version__, "shape": a.shape, "threads": a.threads, "prefill": [], "decode": []}
    with torch.no_grad():
        m.forward(torch.randint(0, s["vocab"], (1, 16)), 0, None)  # warm-up
        for spec in a.prefill.split(","):
            B, T = map(int, spec.split("x"))
            ids = torch.randint(0, s["vocab"], (B, T))
            t0 = time.perf_counter()
            m.forward(ids, 0, None)
            dt = time.perf_counter() - t0
            out["prefill"].append(dict(sequences=B, tokens=T, seconds=dt, tokensPerSecond=B * T / dt))
        for B in map(int, a.decode.split(",")):
            cache = [(torch.randn(B, s["kv_heads"], a.context, s["head_dim"]), torch.randn(B, s["kv_heads"], a.context, s["head_dim"])) for _ in m.layers]
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
