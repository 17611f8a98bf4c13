"""Blind-set loop: ``torch.compile(model, backend="aot_eager")`` left in from debugging.

The user trains a small Llama-style LM (Hugging Face ``transformers``
``LlamaForCausalLM`` built from a ``LlamaConfig``, random weights, 8 layers x
512, SwiGLU 1408, vocabulary 8192; batch 16 x 1024 tokens, bf16 autocast, fused
AdamW).  While chasing a compile error they followed the "ablation" advice and
switched the backend to ``"aot_eager"``; the error went away and the argument
stayed::

    cmodel = torch.compile(model, backend="aot_eager")

``aot_eager`` runs Dynamo and AOTAutograd but compiles nothing: the captured
forward and backward graphs are executed op by op with the eager ATen kernels
(through Python FX code).  So none of the model's memory-bound work is fused:
RMSNorm (fp32 upcast, pow, mean, rsqrt, two multiplies, downcast), rotary
embeddings (slice, neg, cat, mul, add for q and k), the SwiGLU gate and the
residual adds each run as separate kernels, forward and backward, about two
thousand launches per step.  The remedy uses the default Inductor backend,
``torch.compile(model)``, which fuses them into a few Triton kernels per layer.

Attention uses SDPA in both variants; batches are fixed-length token sequences
made once in ``build`` and kept on the device.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/docs/stable/compile/programming_model.reporting_issues.html"
SOURCE_SAYS = (
    "torch.compile 'Reporting Issues' docs, 'Ablation': backend='eager' and backend='aot_eager' exist to find "
    "which component of the stack causes a failure; aot_eager only runs TorchDynamo and AOTAutograd, and only "
    "backend='inductor' (the default) 'generates compiled kernels'. A public issue on the same misuse "
    "(https://gitcode.com/Ascend/pytorch/issues/5109) measured aot_eager at 0.31x of eager on a small-op "
    "transformer and asks the docs to say it is for debugging, not speed; use Inductor for performance."
)
REMEDY = 'use the default Inductor backend: torch.compile(model) (drop backend="aot_eager")'
REMEDY_WORDS = (
    "aot_eager",
    "aot eager",
    "aot-eager",
    "inductor",
    "default backend",
    "debug backend",
    "debugging backend",
    "backend argument",
    "compile backend",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        cfg = LlamaConfig(
            vocab_size=8192,
            hidden_size=512,
            intermediate_size=1408,
            num_hidden_layers=8,
            num_attention_heads=8,
            num_key_value_heads=8,
            max_position_embeddings=1024,
            tie_word_embeddings=False,
        )
        B, T, n_batches = 16, 1024, 4
    else:
        cfg = LlamaConfig(
            vocab_size=256,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=64,
            tie_word_embeddings=False,
            bos_token_id=0,
            eos_token_id=0,
        )
        B, T, n_batches = 2, 16, 2
    cfg._attn_implementation = "sdpa"
    model = LlamaForCausalLM(cfg).to(dev).train()
    if remedy:
        cmodel = torch.compile(model)  # default backend="inductor"
    else:
        cmodel = torch.compile(model, backend="aot_eager")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=cuda, foreach=None if cuda else True)
    V = cfg.vocab_size
    batches = [torch.randint(0, V, (B, T + 1), device=dev) for _ in range(n_batches)]
    it = [0]

    def step() -> None:
        seq = batches[it[0] % n_batches]
        it[0] += 1
        ids, labels = seq[:, :-1], seq[:, 1:]
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            logits = cmodel(input_ids=ids, use_cache=False).logits
        loss = F.cross_entropy(logits.float().reshape(-1, V), labels.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
