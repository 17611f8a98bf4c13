"""The share of padding in a compiled graph's attention mask, read where it compiles, reaches the
capture and its finding (the fourth blind round's GPT-2 fed `padding="max_length"`: 2.04x padded
to the longest, H200)."""

from __future__ import annotations

import compilescope
import torch
from compilescope.live.compiled_code.padding import padding_shares


def test_masks_are_read_by_their_convention_and_other_inputs_are_not():
    hf = torch.zeros(2, 8, dtype=torch.long)
    hf[:, :2] = 1  # Hugging Face: 1 keeps, 0 pads (6 of 8 padded)
    nn_mask = torch.zeros(2, 8, dtype=torch.bool)
    nn_mask[:, 4:] = True  # torch.nn: True pads (4 of 8)
    ids = torch.randint(0, 50, (2, 8))
    shares = padding_shares(
        ["l_kwargs_attention_mask_", "l_src_key_padding_mask_", "l_input_ids_", "l_x_"],
        [hf, nn_mask, ids, torch.randn(2, 8)],
    )
    assert shares == {"l_kwargs_attention_mask_": 0.75, "l_src_key_padding_mask_": 0.5}
    # Any name with "mask" (a user's own forward(ids, mask)); a random 0/1 mask (masked LM)
    # is not padding: its padding is not one run at the end or the start of each row.
    left = torch.ones(2, 8, dtype=torch.long)
    left[:, :3] = 0
    assert padding_shares(["l_mask_"], [left]) == {"l_mask_": 0.375}
    mlm = torch.tensor([[1, 0, 1, 1, 0, 1, 1, 1]] * 2)
    assert padding_shares(["l_mlm_mask_"], [mlm]) == {}
    # A mask of other values (a bias, positions) or 4-d is not a padding mask.
    assert padding_shares(["l_attention_mask_"], [torch.full((2, 8), 3)]) == {}
    assert padding_shares(["l_attention_mask_"], [torch.ones(1, 1, 8, 8, dtype=torch.long)]) == {}


def test_a_compiled_model_fed_mostly_padding_says_so():
    torch.manual_seed(0)
    # The graph's work must be most of the step, on a loaded CI machine too: a finding under
    # 5% of the step is not shown (ci18 and ci19: a 0.17 ms graph in a slower step, none shown).
    emb, mid, head = torch.nn.Embedding(50, 256), torch.nn.Linear(256, 256), torch.nn.Linear(256, 4)
    opt = torch.optim.SGD([*emb.parameters(), *mid.parameters(), *head.parameters()], lr=0.01)

    @torch.compile
    def model(input_ids, attention_mask):
        h = emb(input_ids) * attention_mask.unsqueeze(-1)
        return head(torch.tanh(mid(torch.tanh(mid(h))))).sum()

    ids = torch.randint(0, 50, (8, 256))
    mask = torch.zeros(8, 256, dtype=torch.long)
    mask[:, :32] = 1  # 224 of 256 positions padded
    with compilescope.capturing(eager_steps=0) as cap:
        for _ in range(24):  # the real steps' window: 2 to settle, 10 timed, 3 split
            model(input_ids=ids, attention_mask=mask).backward()
            opt.step()
            opt.zero_grad()
    c = cap.capture
    (masks,) = [x.metrics["padding"] for x in c if "padding" in x.metrics]
    assert list(masks.values()) == [0.875]
    real = c.timings.real_steps
    assert real is not None and real.graphs, c.timings.real_steps_note  # the graph's time
    found = [f for f in compilescope.findings(c) if f.kind == "padding"]
    ids = [(str(x.id), sorted(x.metrics.get("padding", {}))) for x in c]
    timed = [(g.compile_id, g.role, g.seconds) for g in real.graphs]
    assert found, ([f.kind for f in compilescope.findings(c)], ids, timed)
    assert "88% of the positions of `attention_mask` (8 x 256) are padding" in found[0].what, found[
        0
    ].cost.share
    assert found[0].fix.title == "pad each batch to its longest sequence"
    again = compilescope.Capture.from_json(c.to_json())
    assert [x.metrics["padding"] for x in again if "padding" in x.metrics] == [masks]
