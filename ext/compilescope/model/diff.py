"""What changed between two captures: compile ids, graph breaks, graphs per stage, kernels, times,
and whether the user's real steps got faster."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from .capture import Capture
from .compile import Compile, compile_seconds, counted_elsewhere
from .graph import Node
from .kernel import Kernel
from .measured.compile_budget import compile_budget
from .measured.speedup import StepSpeedup


@dataclass(frozen=True)
class NodeChange:
    """One node that came, went or changed, with its one-line text on each side ("" if absent)."""

    name: str
    change: str  # "added", "removed", "changed"
    before: str
    after: str


@dataclass(frozen=True)
class GraphChange:
    """One stage of one compile id: node counts and which node names came or went."""

    compile_id: str
    kind: str
    nodes_before: int
    nodes_after: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]  # in the same place, another target or tensor ("old -> new" name)
    nodes: tuple[NodeChange, ...] = ()  # the same, node by node, in graph order


@dataclass(frozen=True)
class KernelChange:
    """A kernel added, removed, changed (same name, other source) or replaced: a kernel gone and
    one new in the same graph, paired by position since Inductor names kernels by what they fuse."""

    compile_id: str
    name: str
    change: str  # "added", "removed", "changed", "replaced", "config" (same code, other launch)
    before: str = ""  # source before ("" when added)
    after: str = ""  # source after ("" when removed)

    def source_diff(self, context: int = 3) -> list[str]:
        """Unified diff of the kernel's source, before -> after."""
        return list(
            difflib.unified_diff(
                self.before.splitlines(),
                self.after.splitlines(),
                "before",
                "after",
                n=context,
                lineterm="",
            )
        )


@dataclass(frozen=True)
class CaptureDiff:
    """`before` -> `after`. Compiles are matched by frame, not by number: a re-run of the same
    code gets new frame ids (`0/0` then `3/0`), and is labelled `0/0->3/0`."""

    compiles_added: tuple[str, ...]
    compiles_removed: tuple[str, ...]
    breaks_added: tuple[str, ...]
    breaks_removed: tuple[str, ...]
    graphs: tuple[GraphChange, ...]
    kernels: tuple[KernelChange, ...]
    times: tuple[tuple[str, float | None, float | None], ...]  # id, before s, after s
    # Compiled graph's median run time (from timings, when both captures measured it).
    runtimes: tuple[tuple[str, float | None, float | None], ...] = ()
    # Compile id, collectives before, after: where the graphs' collectives differ (two ranks
    # of one job that would not meet at the same all-reduce).
    collectives: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()
    # The user's real steps, before's compiled median over after's, with its interval and
    # verdict; None when neither capture followed the user's steps.
    step_speedup: StepSpeedup | None = None
    # Each capture's compile time (compile_budget's figure) and what it means: cold or warm.
    compile_totals: tuple[float | None, float | None] = (None, None)
    compile_labels: tuple[str, str] = ("", "")
    warmth: tuple[tuple[str, str], ...] = ()  # per `times` row: "cold", "warm" or "" each

    @property
    def same(self) -> bool:
        return not (
            self.compiles_added
            or self.compiles_removed
            or self.breaks_added
            or self.breaks_removed
            or any(g.added or g.removed or g.changed for g in self.graphs)
            or self.kernels
            or self.collectives
        )

    def summary(self) -> str:
        lines = [
            "no differences in compile ids, graph breaks, graphs or kernels"
            if self.same
            else "differences:"
        ]
        for cid in self.compiles_added:
            lines.append(f"  + compile {cid}")
        for cid in self.compiles_removed:
            lines.append(f"  - compile {cid}")
        for brk in self.breaks_added:
            lines.append(f"  + graph break {brk}")
        for brk in self.breaks_removed:
            lines.append(f"  - graph break {brk}")
        for g in self.graphs:
            if g.added or g.removed or g.changed or g.nodes_before != g.nodes_after:
                lines.append(
                    f"  {g.compile_id} {g.kind}: {g.nodes_before} -> {g.nodes_after} nodes"
                    f" (+{len(g.added)} -{len(g.removed)} ~{len(g.changed)})"
                )
        for k in self.kernels:
            if k.change == "config":  # the two configs, in words
                lines.append(f"  {k.compile_id} kernel launched with another config: {k.name}")
                lines.append(f"    before: {k.before}\n    after:  {k.after}")
            else:
                lines.append(f"  {k.compile_id} kernel {k.change}: {k.name}")
        for cid, before, after in self.collectives:
            lines.append(
                f"  {cid} collectives: {', '.join(before) or 'none'} -> {', '.join(after) or 'none'}"
            )
        ta, tb = self.compile_totals
        if ta is not None and tb is not None:
            la, lb = (f" ({label})" if label else "" for label in self.compile_labels)
            lines.append(f"  compile time {ta:.2f} s{la} -> {tb:.2f} s{lb}")
        warmth = self.warmth or (("", ""),) * len(self.times)
        for (cid, a, b), (wa, wb) in zip(self.times, warmth, strict=False):
            if a is not None and b is not None:
                sa, sb = (f" ({w})" if w else "" for w in (wa, wb))
                lines.append(f"  {cid} compile time {a:.2f} s{sa} -> {b:.2f} s{sb}")
        for cid, a, b in self.runtimes:
            if a is not None and b is not None:
                lines.append(f"  {cid} compiled run {a * 1e3:.3f} ms -> {b * 1e3:.3f} ms")
        if self.step_speedup is not None:
            lines.append(f"  real steps: {self.step_speedup.text()}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()


def _break_key(cid: str, compile_: Compile, cells: dict[str, int]) -> list[str]:
    out = []
    for brk in compile_.graph_breaks:
        # A notebook cell's file name changes at every run (<ipython-input-N-hash>), so the
        # same code re-run in another cell is matched by its line in the cell, not its file.
        if brk.location is None:
            where = "?"
        elif brk.location.cell_in(cells) is not None:
            where = f"cell line {brk.location.line}"
        else:
            where = f"{brk.location.file}:{brk.location.line}"
        out.append(f"{cid} at {where}: {brk.reason.splitlines()[0] if brk.reason else ''}")
    return out


def diff(before: Capture, after: Capture) -> CaptureDiff:
    """Compare two captures (two runs, or two ranks: `diff(cap.rank(0), cap.rank(1))`)."""
    a, b = _by_match_key(before), _by_match_key(after)
    breaks_a = [k for c in a.values() for k in _break_key(_label(c), c, before.cells)]
    breaks_b = [k for c in b.values() for k in _break_key(_label(c), c, after.cells)]
    from .ranks.records import collectives_in

    graphs, kernels, times, runtimes, collectives = [], [], [], [], []
    budget_a, budget_b = compile_budget(before), compile_budget(after)
    warmth: list[tuple[str, str]] = []
    for key in [k for k in a if k in b]:
        ca, cb = a[key], b[key]
        cid = _label(ca) if _label(ca) == _label(cb) else f"{_label(ca)}->{_label(cb)}"
        for kind in dict.fromkeys([*ca.graphs, *cb.graphs]):
            graphs.append(_graph_change(cid, kind, ca, cb))
        kernels.extend(_kernel_changes(cid, ca, cb))
        times.append((cid, _compile_time(before, ca), _compile_time(after, cb)))
        warmth.append((budget_a.warmth(str(ca.id)), budget_b.warmth(str(cb.id))))
        runtimes.append((cid, _compiled_median(before, ca), _compiled_median(after, cb)))
        ops_a, ops_b = collectives_in(ca), collectives_in(cb)
        if ops_a != ops_b:
            collectives.append((cid, tuple(map(str, ops_a)), tuple(map(str, ops_b))))
    # Graph breaks are compared by user line and reason, whatever compile id they landed in.
    breaks_a = [k.split(" at ", 1)[1] for k in breaks_a]
    breaks_b = [k.split(" at ", 1)[1] for k in breaks_b]
    return CaptureDiff(
        compiles_added=tuple(_label(c) for k, c in b.items() if k not in a),
        compiles_removed=tuple(_label(c) for k, c in a.items() if k not in b),
        breaks_added=tuple(k for k in breaks_b if k not in breaks_a),
        breaks_removed=tuple(k for k in breaks_a if k not in breaks_b),
        graphs=tuple(graphs),
        kernels=tuple(kernels),
        times=tuple(times),
        runtimes=tuple(r for r in runtimes if r[1] is not None or r[2] is not None),
        collectives=tuple(collectives),
        step_speedup=_with_compile_times(
            StepSpeedup.from_timings(before.timings, after.timings), before, after
        ),
        compile_totals=(budget_a.seconds or None, budget_b.seconds or None),
        compile_labels=(budget_a.label, budget_b.label),
        warmth=tuple(warmth),
    )


def _compile_time(capture: Capture, c: Compile) -> float | None:
    """The compile's time (None for a restart whose time is its first attempt's)."""
    return None if counted_elsewhere(c, capture.compiles) else c.compile_time_s


def _with_compile_times(
    speedup: StepSpeedup | None, before: Capture, after: Capture
) -> StepSpeedup | None:
    """The speedup knowing each capture's whole compile time (what a longer compile costs)."""
    if speedup is None:
        return None
    return speedup.with_compile_times(compile_seconds(before), compile_seconds(after))


def _signature(node: Node) -> tuple[object, ...]:
    return (node.op, node.target, node.type_text or node.tensors)


def _graph_change(cid: str, kind: str, ca: Compile, cb: Compile) -> GraphChange:
    """Nodes are aligned by what they compute (op, target, type) in graph order, not by name:
    FX names a node after the variable it is assigned to, so `y = x.sin()` -> `y = x.sin().cos()`
    moves the name `y` from sin to cos, and matching by name would call both changed."""
    ga, gb = ca.graph(kind), cb.graph(kind)
    na = list(ga.nodes) if ga else []
    nb = list(gb.nodes) if gb else []
    matcher = difflib.SequenceMatcher(
        None, [_signature(n) for n in na], [_signature(n) for n in nb], autojunk=False
    )
    nodes: list[NodeChange] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        olds, news = na[i1:i2], nb[j1:j2]
        paired = min(len(olds), len(news)) if tag == "replace" else 0
        for old, new in zip(olds[:paired], news[:paired], strict=True):
            name = old.name if old.name == new.name else f"{old.name} -> {new.name}"
            nodes.append(NodeChange(name, "changed", old.describe(), new.describe()))
        nodes += [NodeChange(n.name, "removed", n.describe(), "") for n in olds[paired:]]
        nodes += [NodeChange(n.name, "added", "", n.describe()) for n in news[paired:]]
    return GraphChange(
        cid,
        kind,
        len(na),
        len(nb),
        tuple(c.name for c in nodes if c.change == "added"),
        tuple(c.name for c in nodes if c.change == "removed"),
        tuple(c.name for c in nodes if c.change == "changed"),
        tuple(nodes),
    )


def _kernel_changes(cid: str, ca: Compile, cb: Compile) -> list[KernelChange]:
    ka = {(code.role, k.name): k for code in ca.output_code for k in code.kernels}
    kb = {(code.role, k.name): k for code in cb.output_code for k in code.kernels}

    def label(key: tuple[str, str]) -> str:
        return f"{key[1]} ({key[0]})" if key[0] else key[1]

    out = []
    gone = [k for k in ka if k not in kb]
    new = [k for k in kb if k not in ka]
    for key in [k for k in ka if k in kb]:
        if ka[key].source != kb[key].source:
            out.append(KernelChange(cid, label(key), "changed", ka[key].source, kb[key].source))
        elif _config(ka[key]) != _config(kb[key]) and _config(ka[key]) and _config(kb[key]):
            # Same code, another launch config: the runtime autotuner chose differently (a
            # kernel can run twice as long for it: block 512 vs 256).
            out.append(KernelChange(cid, label(key), "config", _config(ka[key]), _config(kb[key])))
    # A kernel fusing other ops gets another name (cpp_fused_sin_0 -> cpp_fused_cos_sin_0):
    # pair what went and what came within one graph role and language, in order.
    for old in list(gone):
        match = next(
            (k for k in new if k[0] == old[0] and kb[k].language == ka[old].language),
            None,
        )
        if match is None:
            continue
        gone.remove(old)
        new.remove(match)
        name = f"{label(old)} -> {match[1]}"
        out.append(KernelChange(cid, name, "replaced", ka[old].source, kb[match].source))
    out += [KernelChange(cid, label(k), "removed", ka[k].source, "") for k in gone]
    out += [KernelChange(cid, label(k), "added", "", kb[k].source) for k in new]
    return out


def _config(kernel: Kernel) -> str:
    """The launch config a Triton kernel ran with ("" when not known)."""
    keys = [k for k in kernel.launch if k not in ("registers", "spills", "autotune_us")]
    return ", ".join(f"{k}={kernel.launch[k]}" for k in sorted(keys))


def _compiled_median(capture: Capture, compile_: Compile) -> float | None:
    if capture.timings is None:
        return None
    for g in capture.timings.graphs:
        if g.compile_id == str(compile_.id) and g.compiled is not None:
            return g.compiled.median_s
    return None


def _label(c: Compile) -> str:
    from dataclasses import replace

    return str(replace(c.id, rank=None))


def _by_match_key(capture: Capture) -> dict[tuple[object, ...], Compile]:
    """Key each compile by what it compiled: frame, recompile number, attempt, occurrence."""
    out: dict[tuple[object, ...], Compile] = {}
    for c in capture:
        base = (
            c.frame.function,  # not the file: an edited notebook cell gets a new file name
            c.id.frame_compile_id,
            c.id.attempt,
            c.id.compiled_autograd_id is not None,
        )
        n = 0
        while (*base, n) in out:
            n += 1
        out[base + (n,)] = c  # (*base, n): mypy reads out[(*base, n)] as 3.11's out[*base, n]
    return out
