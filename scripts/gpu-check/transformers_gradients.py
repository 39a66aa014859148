"""Reference gradients for the trainer cross-check (native/tests/test_cuda_transformers.cpp): in a folder
transformers_reference.py wrote (a transformers Qwen3ForCausalLM saved with save_pretrained, bf16),
gradients.safetensors holds two sequences of token ids, a weight per predicted token, and the gradient
of the weighted loss  L = −Σ_t coef_t · log p(ids[t + 1] | ids[..t])  (our SFT loss, native/train/losses.h)
with respect to every parameter, computed by autograd on the GPU (or S3_REFERENCE_DEVICE): in f32 (the bf16 weights cast up, TF32
off) and under torch.autocast(bfloat16) (f32 master weights, bf16 products), under the parameter names
prefixed "f32." and "bf16.". An implementation nobody here wrote.

    python3 scripts/gpu-check/transformers_gradients.py DIR
    S3_REFERENCE_DEVICE=cpu python3 ...   # the same on the CPU (checks the CPU trainer without a GPU)
"""
import os
import sys

import torch
from safetensors.torch import save_file
from transformers import Qwen3ForCausalLM

SEQUENCES, LENGTH = 2, 64
DEVICE = os.environ.get("S3_REFERENCE_DEVICE", "cuda")


def gradients(model, ids, coef, autocast):
    model.zero_grad(set_to_none=True)
    with torch.autocast(DEVICE, dtype=torch.bfloat16, enabled=autocast):
        logits = model(input_ids=ids).logits
    logprobs = torch.log_softmax(logits.float()[:, :-1], dim=-1).gather(-1, ids[:, 1:, None])[..., 0]
    loss = -(coef * logprobs).sum()
    loss.backward()
    return loss.item(), {name: p.grad.detach().float().cpu().contiguous() for name, p in model.named_parameters()}


def main() -> None:
    out = sys.argv[1]
    torch.manual_seed(4321)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = Qwen3ForCausalLM.from_pretrained(out, torch_dtype=torch.float32).to(DEVICE).train()
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (SEQUENCES, LENGTH), device=DEVICE)
    coef = (torch.rand(SEQUENCES, LENGTH - 1, device=DEVICE) * (torch.rand(SEQUENCES, LENGTH - 1, device=DEVICE) < 0.8)) / LENGTH
    tensors = {"ids": ids.to(torch.int32).cpu().contiguous(), "coef": coef.float().cpu().contiguous()}
    for prefix, autocast in (("f32", False), ("bf16", True)):
        loss, grads = gradients(model, ids, coef, autocast)
        tensors[f"{prefix}.loss"] = torch.tensor([loss], dtype=torch.float32)
        for name, grad in grads.items():
            tensors[f"{prefix}.{name}"] = grad
    save_file(tensors, f"{out}/gradients.safetensors")
    print(f"{out}: gradients of {len(grads)} parameters for {SEQUENCES} × {LENGTH} tokens")


if __name__ == "__main__":
    main()
