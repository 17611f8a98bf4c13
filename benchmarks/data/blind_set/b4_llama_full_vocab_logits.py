"""Blind-set loop: LM head run over every position although only the completion's logits are used.

A GRPO-style policy-gradient step on a Llama-3-shaped causal LM (Hugging Face
``transformers``, built from a ``LlamaConfig`` with the 128k Llama-3
vocabulary and random weights).  Each sequence is a 448-token prompt followed
by a 64-token sampled completion; the loss needs the log-probabilities of the
completion tokens only.  The user calls ``model(input_ids).logits`` and slices
the last 65 positions afterwards, so the 128256-way LM head is computed (and
back-propagated) for all 512 positions: a (16, 512, 128256) logits tensor,
about 87% of which is thrown away, plus the matching GEMMs in forward and in
both backward products.  The remedy passes ``logits_to_keep=65`` so the model
slices the hidden states *before* the LM head (what TRL's GRPO trainer does).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

SOURCE = "https://github.com/huggingface/trl/pull/2683"
SOURCE_SAYS = (
    "TRL PR #2683 'Use num_logits_to_keep to reduce memory usage in GRPO': don't compute the logits of the "
    "prompt; pass num_logits_to_keep / logits_to_keep = completion_length + 1 to the causal-LM forward so the "
    "LM head runs only on the positions whose log-probabilities are used, instead of computing logits for the "
    "whole sequence and slicing afterwards (transformers slices hidden_states before lm_head, see also "
    "https://github.com/huggingface/transformers/pull/46660)."
)
REMEDY = "pass logits_to_keep=completion_len+1 so the LM head only runs on the completion positions"
REMEDY_WORDS = (
    "logits_to_keep",
    "num_logits_to_keep",
    "before the lm head",
    "before the lm_head",
    "before lm_head",
    "slice the hidden states",
    "slice hidden states",
    "slicing the hidden states",
    "only the completion",
    "only for the completion",
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
            vocab_size=128256,
            hidden_size=1024,
            intermediate_size=2816,
            num_hidden_layers=8,
            num_attention_heads=16,
            num_key_value_heads=8,
            max_position_embeddings=2048,
            rope_theta=500000.0,
            bos_token_id=128000,
            eos_token_id=128001,
        )
        B, P, C = 16, 448, 64
    else:
        cfg = LlamaConfig(
            vocab_size=2048,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
            bos_token_id=0,
            eos_token_id=0,
        )
        B, P, C = 2, 12, 4
    model = LlamaForCausalLM(cfg).to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6, fused=cuda, foreach=None if cuda else True)
    keep_kw = (
        "logits_to_keep"
        if "logits_to_keep" in inspect.signature(LlamaForCausalLM.forward).parameters
        else "num_logits_to_keep"
    )

    # one rollout batch: prompt + sampled completion, and a per-sequence advantage
    ids = torch.randint(0, cfg.vocab_size, (B, P + C), device=dev)
    completion = ids[:, P:]
    advantages = torch.randn(B, device=dev)

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            if remedy:
                logits = cmodel(input_ids=ids, use_cache=False, **{keep_kw: C + 1}).logits
            else:
                logits = cmodel(input_ids=ids, use_cache=False).logits[:, -(C + 1) :]
        logits = logits[:, :-1]  # the logit at position t predicts token t+1
        logps = torch.log_softmax(logits.float(), dim=-1)
        token_logps = logps.gather(-1, completion.unsqueeze(-1)).squeeze(-1)  # (B, C)
        loss = -(token_logps * advantages[:, None]).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
