"""Blind-set loop: gradient accumulation over many tiny micro-batches although a big one fits.

The user trains a small Llama-style causal LM (Hugging Face ``transformers``,
built from a ``LlamaConfig`` with random weights) with a global batch of 16
sequences of 256 tokens.  The config was copied from a run on a 24 GB GPU:
``per_device_train_batch_size=4`` and ``gradient_accumulation_steps=4``.  On
the H200 a micro-batch of 4 x 256 tokens keeps the GPU mostly idle, so each
optimizer step runs 4 small forward/backward passes (4x the kernel launches,
guard checks, weight reads and gradient-accumulation adds) for the same 4096
tokens.  The remedy runs the whole global batch as one micro-batch of 16
(no accumulation; same optimizer step), as the Hugging Face guide advises: use
the largest batch that fits and accumulate only what does not.

The global batch is made once in ``build`` and kept on the device, already
split into the micro-batches of each variant.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

SOURCE = "https://huggingface.co/docs/transformers/perf_train_gpu_one"
SOURCE_SAYS = (
    "Hugging Face 'Methods and tools for efficient training on a single GPU' (perf_train_gpu_one): throughput "
    "is maximised by using the GPU as much as possible, filling its memory with the batch; gradient "
    "accumulation is a memory technique (it does not improve training speed) for when the desired batch does "
    "not fit, and 'if the preferred batch size fits into memory, there's no reason to apply memory-optimizing "
    "techniques because they can slow down the training' (older version: "
    "https://huggingface.co/docs/transformers/v4.21.0/perf_train_gpu_one)."
)
REMEDY = (
    "use a larger per-device micro-batch (16 instead of 4) and fewer gradient-accumulation steps (1 instead "
    "of 4) for the same global batch"
)
REMEDY_WORDS = (
    "larger micro-batch",
    "bigger micro-batch",
    "larger micro batch",
    "bigger micro batch",
    "increase the micro-batch",
    "increase micro-batch",
    "micro-batch size",
    "micro batch size",
    "microbatch size",
    "per_device_train_batch_size",
    "fewer accumulation steps",
    "fewer gradient accumulation steps",
    "fewer gradient-accumulation steps",
    "reduce gradient accumulation",
    "reduce the gradient accumulation",
    "lower gradient accumulation",
    "gradient_accumulation_steps",
    "larger batch size",
    "bigger batch size",
    "increase the batch size",
    "increase batch size",
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
            vocab_size=32000,
            hidden_size=768,
            intermediate_size=2048,
            num_hidden_layers=8,
            num_attention_heads=12,
            num_key_value_heads=4,
            max_position_embeddings=1024,
        )
        global_batch, T = 16, 256
    else:
        cfg = LlamaConfig(
            vocab_size=512,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
            bos_token_id=0,
            eos_token_id=0,
        )
        global_batch, T = 8, 16
    # the user's setting (copied from a small-GPU run) vs the remedy; same global batch
    micro = global_batch if remedy else global_batch // 4
    accum = global_batch // micro
    model = LlamaForCausalLM(cfg).to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=cuda, foreach=None if cuda else True)

    tokens = torch.randint(0, cfg.vocab_size, (global_batch, T), device=dev)
    micro_batches = [tokens[i * micro : (i + 1) * micro].clone() for i in range(accum)]

    def step() -> None:
        for ids in micro_batches:
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
                out = cmodel(input_ids=ids, labels=ids, use_cache=False)
            (out.loss / accum).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
