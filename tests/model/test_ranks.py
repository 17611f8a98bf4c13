"""Cross-rank analysis on recorded and synthetic multi-rank captures (no torch needed)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from dataclasses import replace

import compilescope
import pytest
from compilescope import Capture, CompileId, load_trace, merge_ranks, write_rank
from compilescope.model.compile import Compile
from compilescope.model.graph import Graph
from compilescope.model.ranks.records import collectives_of, graph_hash
from compilescope.model.ranks.report import compare_ranks, ranks_text
from compilescope.trace.graph_text import parse_graph_nodes
from compilescope.views.offline.ranks_html import ranks_html
from conftest import FIXTURES

RANKS = FIXTURES / "ranks"


def graph(kind: str, text: str) -> Graph:
    return Graph(kind, text, parse_graph_nodes(text))


FORWARD = """class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8, 4][4, 1]cuda:{dev}"):
        mul: "f32[8, 4][4, 1]cuda:{dev}" = torch.ops.aten.mul.Tensor(primals_1, 2)
        {line}
        wait_tensor: "f32[8, 4][4, 1]cuda:{dev}" = torch.ops.{ns}.wait_tensor.default(coll)
        return (wait_tensor,)
"""
ALL_REDUCE = (
    "coll: \"f32[8, 4][4, 1]cuda:{dev}\" = torch.ops.{ns}.all_reduce.default(mul, 'sum', '0')"
)
ALL_GATHER = (
    'coll: "f32[16, 4][4, 1]cuda:{dev}" = '
    "torch.ops.{ns}.all_gather_into_tensor.default(mul, 2, '0')"
)


def forward_text(rank: int, line: str = ALL_REDUCE, ns: str = "_c10d_functional") -> str:
    return FORWARD.format(dev=rank, ns=ns, line=line.format(dev=rank, ns=ns))


def job(forwards: dict[int, list[str]]) -> Capture:
    """A capture of several ranks, each compiling frame 0 once per forward text given."""
    compiles = []
    for rank, texts in forwards.items():
        for number, text in enumerate(texts):
            compiles.append(
                Compile(
                    CompileId(rank, None, 0, number),
                    graphs={"aot_forward_graph": (graph("aot_forward_graph", text),)},
                    recompile_reasons=("size mismatch",) if number else (),
                )
            )
    return Capture(tuple(compiles), ranks=tuple(forwards))


def test_collectives_in_graph_order_with_shapes_both_namespaces():
    for ns in ("_c10d_functional", "c10d_functional"):
        found = collectives_of(graph("aot_forward_graph", forward_text(1, ns=ns)))
        assert [c.op for c in found] == ["all_reduce", "wait_tensor"]
        assert found[0].tensors == "f32[8, 4][4, 1]cuda"  # the device index is dropped
        assert "'sum'" in found[0].args
    gathered = collectives_of(graph("aot_forward_graph", forward_text(0, ALL_GATHER)))
    assert gathered[0].op == "all_gather_into_tensor" and gathered[0].tensors.startswith("f32[16")
    assert collectives_of(graph("aot_forward_graph", "def forward(self, x):\n    return x")) == ()


def test_a_graph_hashes_the_same_on_every_device_and_node():
    a = graph("aot_forward_graph", forward_text(0))
    b = graph("aot_forward_graph", forward_text(3))
    assert graph_hash(a) == graph_hash(b)
    line = "        # File: {}model.py:7 in forward, code: y = x * 2\n"
    here, there = (
        graph("aot_forward_graph", forward_text(0).replace("        mul", line.format(d) + "        mul"))
        for d in ("/home/a/job/", "/scratch/node7/job/")
    )  # fmt: skip
    assert graph_hash(here) == graph_hash(there) != graph_hash(a)
    other_line = graph("aot_forward_graph", here.text.replace("model.py:7", "model.py:8"))
    assert graph_hash(other_line) != graph_hash(here)
    assert graph_hash(a) != graph_hash(graph("aot_forward_graph", forward_text(0, ALL_GATHER)))


def test_a_device_passed_as_an_argument_is_the_same_on_every_rank():
    # The 2-GPU run's backward graphs: aten.full(..., device=device(type='cuda', index=RANK)).
    full = "        full: \"f32[][]cuda:{0}\" = torch.ops.aten.full.default([], 0.0, device = device(type='cuda', index={0}))\n"
    a, b = (
        graph("aot_backward_graph", forward_text(r).replace("        mul", full.format(r) + "        mul"))
        for r in (0, 1)
    )  # fmt: skip
    assert (
        graph_hash(a) == graph_hash(b) != graph_hash(graph("aot_backward_graph", forward_text(0)))
    )
    report = compare_ranks(job({0: [a.text], 1: [b.text]}))
    assert not report.diverged, report.summary()


def test_four_ranks_agree():
    report = compare_ranks(job({r: [forward_text(r)] for r in range(4)}))
    assert not report.diverged and report.groups == ((0, 1, 2, 3),)
    assert "all ranks agree" in report.summary()
    assert all(len(g) == 1 for g in report.aspect_groups.values())


def test_one_rank_with_other_collectives_is_named_with_the_first_one_that_differs():
    forwards = {r: [forward_text(r)] for r in range(4)}
    forwards[2] = [forward_text(2, ALL_GATHER)]
    report = compare_ranks(job(forwards))
    assert report.diverged and report.groups == ((0, 1, 3), (2,))
    assert report.aspect_groups["collectives"] == ((0, 1, 3), (2,))
    assert report.aspect_groups["compile ids"] == ((0, 1, 2, 3),)
    (part,) = report.divergences
    assert (part.ranks, part.reference, part.compile_id) == ((2,), (0, 1, 3), "0/0")
    # Graphs are compared before collectives, and this graph differs in its collective node.
    assert part.aspect == "graphs" and "all_gather_into_tensor" in part.detail
    assert "rank 2 parts from ranks 0, 1, 3 at compile 0/0" in report.summary()


def test_a_recompile_on_one_rank_is_where_it_parts():
    forwards = {r: [forward_text(r)] for r in range(3)}
    forwards[1].append(forward_text(1, ALL_GATHER))
    report = compare_ranks(job(forwards))
    (part,) = report.divergences
    assert part.ranks == (1,) and part.aspect == "compile ids" and part.compile_id == "0/1"
    assert "rank 1 compiles 0/1 (recompile: size mismatch); ranks 0, 2 do not" == part.detail
    # Every aspect reads the whole record: the extra compile's all_gather is a difference of
    # collectives too (issue 21: aspects once compared only the compile ids both ranks had).
    assert report.aspect_groups["collectives"] == ((0, 2), (1,))
    assert report.aspect_groups["cache"] == ((0, 1, 2),)  # it logged no cache events


def test_a_missing_rank_is_incomplete_not_a_divergence():
    report = compare_ranks(job({0: [forward_text(0)], 1: [forward_text(1)]}), world_size=3)
    assert report.groups == ((0, 1),) and report.missing_ranks == (2,)
    assert not report.diverged and report.status == "incomplete" and report.exit_code == 3
    text = report.summary()
    assert "INCOMPLETE: the record of rank 2 is incomplete" in text
    assert "rank 2: no log or saved capture of it was found; nothing of it was compared" in text


def test_ranks_text():
    assert ranks_text([1]) == "rank 1"
    assert ranks_text([3, 0, 2]) == "ranks 0, 2, 3"
    assert ranks_text([0, 1, 2, 3, 5, 7, 8]) == "ranks 0-3, 5, 7, 8"


def test_recorded_job_rank_1_recompiles_and_multiplies_by_its_rank():
    report = load_trace(RANKS).compare_ranks()
    assert report.groups == ((0,), (1,))
    (part,) = report.divergences
    # ranks_job.py multiplies by rank + 1: the first difference is a constant in 0/0's graph.
    assert part.compile_id == "0/0" and part.aspect == "graphs"
    assert "operator.mul(sin, 2)" in part.detail and "operator.mul(sin, 1)" in part.detail
    assert report.profiles[1][1].recompile_reasons
    html = ranks_html(report)
    assert "ranks diverge" in html and "rank 1" in html and "<script" not in html
    data = json.loads(json.dumps(report.to_dict()))
    assert data["diverged"] and data["groups"] == [[0], [1]]


def copy_as_rank(src, rank: int, target) -> None:
    with gzip.open(src, "rt", encoding="utf-8") as handle:
        text = handle.read().replace('"rank": 0,', f'"rank": {rank},')
    target.write_text(text)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compilescope", *args], capture_output=True, text=True
    )


def test_cli_exits_0_when_ranks_agree_and_1_when_they_diverge(tmp_path):
    rank0 = RANKS / "dedicated_log_torch_trace_rank_0_fixture.log.gz"
    for rank in (0, 1, 2):
        copy_as_rank(rank0, rank, tmp_path / f"dedicated_log_torch_trace_rank_{rank}_x.log")
    same = run_cli("ranks", str(tmp_path), "--json", str(tmp_path / "r.json"))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "all ranks agree" in same.stdout and "3 ranks (0-2)" in same.stdout
    assert json.loads((tmp_path / "r.json").read_text())["diverged"] is False
    missing = run_cli("ranks", str(tmp_path), "--world-size", "4")
    assert missing.returncode == 3 and "rank 3: no log" in missing.stdout
    diverged = run_cli("ranks", str(RANKS))
    assert diverged.returncode == 1 and "rank 1 parts from rank 0 at compile 0/0" in diverged.stdout
    assert run_cli("ranks", str(tmp_path / "nothing")).returncode == 2


def test_merge_ranks_of_captures_without_ranks_keys_them_by_position():
    one = job({0: [forward_text(0)]})
    plain = Capture(tuple(replace(c, id=replace(c.id, rank=None)) for c in one), ranks=())
    merged = merge_ranks([plain, plain])
    assert merged.ranks == (0, 1) and merged.compile_ids == ("rank0:0/0", "rank1:0/0")
    assert merged.compare_ranks().groups == ((0, 1),)
    with pytest.raises(ValueError, match="rank 0 appears twice"):
        merge_ranks([one, one])


def test_write_rank_and_merge_ranks_round_trip(tmp_path):
    recorded = load_trace(RANKS)
    for rank in recorded.ranks:
        write_rank(replace(recorded.rank(rank), world_size=2), tmp_path)
    merged = merge_ranks(tmp_path)
    assert merged.compile_ids == recorded.compile_ids and merged.world_size == 2
    assert merged.rank(1)["0/1"].recompile_reasons  # one rank's capture: ids without the rank
    # A folder without saved captures is read as TORCH_TRACE logs.
    assert merge_ranks(RANKS).compile_ids == recorded.compile_ids


def test_object_ids_in_recompile_reasons_are_not_a_difference():
    forwards = {r: [forward_text(r), forward_text(r)] for r in range(2)}
    cap = job(forwards)
    reasons = {
        0: "4/0: ___check_type_id(self, 94654559507600)  # /home/a/job/train.py:35 in forward",
        1: "4/0: ___check_type_id(self, 94867233363472)  # /scratch/n7/job/train.py:35 in forward",
    }
    compiles = tuple(
        replace(c, recompile_reasons=(reasons[c.id.rank],)) if c.id.frame_compile_id else c
        for c in cap
    )
    report = compare_ranks(replace(cap, compiles=compiles))
    assert not report.diverged, report.summary()
    assert report.profiles[1][1].recompile_reasons == (
        "4/0: ___check_type_id(self, <id>)  # train.py:35 in forward",
    )


def test_the_diff_of_two_ranks_names_their_collectives():
    cap = job({0: [forward_text(0)], 1: [forward_text(1, ALL_GATHER)]})
    between = compilescope.diff(cap.rank(0), cap.rank(1))
    ((cid, before, after),) = between.collectives
    assert cid == "0/0" and before[0].startswith("all_reduce(") and "all_gather" in after[0]
    assert not between.same and "collectives: all_reduce" in between.summary()
    same = job({0: [forward_text(0)], 1: [forward_text(1)]})
    assert not compilescope.diff(same.rank(0), same.rank(1)).collectives


def test_recorded_ddp_job_split_collectives_and_recompile():
    cap = load_trace(FIXTURES / "ranks_ddp")
    assert cap.ranks == (0, 1) and not cap.skipped
    (split,) = [c.ddp_split for c in cap.rank(0) if c.ddp_split is not None]
    # Net in ddp_job.py: the 1 MiB middle layer fills a bucket of its own.
    assert [p.name for p in split.parts] == ["submod_0", "submod_1"]
    assert dict(split.parts[1].parameters)["mid.weight"] == "f32[512, 512]"
    assert split.parts[1].parameter_bytes >= 512 * 512 * 4 and "bucket" in split.why
    report = cap.compare_ranks(world_size=2)
    ops = [c.op for compile_ in report.profiles[1] for c in compile_.collectives]
    assert ops == ["all_reduce", "wait_tensor"]
    assert "6/0 (aot_inference_graph): all_reduce(mul, 'sum', '0') -> f32[4][1]cpu" in str(report)
    assert "collectives of rank 0, in graph order" in ranks_html(report)
    (part,) = report.divergences
    assert (part.ranks, part.compile_id, part.aspect) == ((1,), "0/1", "compile ids")
    assert "expected 8, actual 12" in part.detail
    assert (
        "DDPOptimizer split the graph in 2 at DDP's gradient-bucket boundaries: submod_0 (2 parameters, 34.0 KiB), submod_1 (4 parameters, 1.0 MiB)"
        in cap.summary()
    )


def test_cli_on_a_one_process_log_has_nothing_to_compare():
    out = run_cli("ranks", str(FIXTURES / "plain_function.log.gz"))
    assert out.returncode == 0 and "nothing to compare" in out.stdout


def test_fsdp2_traced_collectives_and_staging_ops():
    text = """class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "bf16[128][1]cuda:0"):
        copy_in = torch.ops.fsdp.all_gather_copy_in.default(primals_1, 128, 0, 2, 0)
        getitem: "bf16[256][1]cuda:0" = copy_in[1]
        gathered: "bf16[256][1]cuda:0" = torch.ops._c10d_functional.all_gather_into_tensor.default(getitem, 2, '1')
        wait_tensor: "bf16[256][1]cuda:0" = torch.ops._c10d_functional.wait_tensor.default(gathered)
        scattered: "f32[64][1]cuda:0" = torch.ops._c10d_functional.reduce_scatter_tensor.default(wait_tensor, 'avg', 2, '1')
        return (scattered,)
"""
    found = collectives_of(graph("aot_forward_graph", text))
    assert [c.op for c in found] == [
        "fsdp.all_gather_copy_in",
        "all_gather_into_tensor",
        "wait_tensor",
        "reduce_scatter_tensor",
    ]
    assert found[1].tensors == "bf16[256][1]cuda" and "'avg'" in found[3].args


def test_the_two_gpu_job_logs():
    """Recorded on two H200s (NCCL, Inductor): the first run's report called the agreeing job
    divergent (a device index passed as an argument); both jobs read right now."""
    agree = compare_ranks(load_trace(FIXTURES / "ranks_gpu" / "agree"))
    assert not agree.diverged, agree.summary()
    diverge = compare_ranks(load_trace(FIXTURES / "ranks_gpu" / "diverge"))
    assert diverge.diverged and "rank 1 parts from rank 0 at compile 0/1" in diverge.summary()
