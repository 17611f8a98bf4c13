"""What changed between two captures: compile ids, graph breaks, graphs per stage, kernels, times."""

from __future__ import annotations

from dataclasses import dataclass

from .capture import Capture
from .compile import Compile


@dataclass(frozen=True)
class GraphChange:
    """One stage of one compile id: node counts and which node names came or went."""

    compile_id: str
    kind: str
    nodes_before: int
    nodes_after: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]  # same name, different target or tensor


@dataclass(frozen=True)
class KernelChange:
    compile_id: str
    name: str
    change: str  # "added", "removed", "changed" (source differs)


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

    @property
    def same(self) -> bool:
        return not (
            self.compiles_added
            or self.compiles_removed
            or self.breaks_added
            or self.breaks_removed
            or any(g.added or g.removed or g.changed for g in self.graphs)
            or self.kernels
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
            lines.append(f"  {k.compile_id} kernel {k.change}: {k.name}")
        for cid, a, b in self.times:
            if a is not None and b is not None:
                lines.append(f"  {cid} compile time {a:.2f} s -> {b:.2f} s")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()


def _break_key(cid: str, compile_: Compile) -> list[str]:
    out = []
    for brk in compile_.graph_breaks:
        # A notebook cell's file name changes at every run (<ipython-input-N-hash>), so the
        # same code re-run in another cell is matched by its line in the cell, not its file.
        if brk.location is None:
            where = "?"
        elif brk.cell is not None:
            where = f"cell line {brk.location.line}"
        else:
            where = f"{brk.location.file}:{brk.location.line}"
        out.append(f"{cid} at {where}: {brk.reason.splitlines()[0] if brk.reason else ''}")
    return out


def diff(before: Capture, after: Capture) -> CaptureDiff:
    """Compare two captures (two runs, or two ranks: `diff(cap.rank(0), cap.rank(1))`)."""
    a, b = _by_match_key(before), _by_match_key(after)
    breaks_a = [k for c in a.values() for k in _break_key(_label(c), c)]
    breaks_b = [k for c in b.values() for k in _break_key(_label(c), c)]
    graphs, kernels, times = [], [], []
    for key in [k for k in a if k in b]:
        ca, cb = a[key], b[key]
        cid = _label(ca) if _label(ca) == _label(cb) else f"{_label(ca)}->{_label(cb)}"
        for kind in dict.fromkeys([*ca.graphs, *cb.graphs]):
            ga, gb = ca.graph(kind), cb.graph(kind)
            na = {n.name: n for n in ga.nodes} if ga else {}
            nb = {n.name: n for n in gb.nodes} if gb else {}
            changed = tuple(
                n
                for n in na
                if n in nb and (na[n].target, na[n].tensors) != (nb[n].target, nb[n].tensors)
            )
            graphs.append(
                GraphChange(
                    cid,
                    kind,
                    len(na),
                    len(nb),
                    tuple(n for n in nb if n not in na),
                    tuple(n for n in na if n not in nb),
                    changed,
                )
            )
        ka = {(code.role, k.name): k for code in ca.output_code for k in code.kernels}
        kb = {(code.role, k.name): k for code in cb.output_code for k in code.kernels}
        for key in dict.fromkeys([*ka, *kb]):
            label = f"{key[1]} ({key[0]})" if key[0] else key[1]
            if key not in kb:
                kernels.append(KernelChange(cid, label, "removed"))
            elif key not in ka:
                kernels.append(KernelChange(cid, label, "added"))
            elif ka[key].source != kb[key].source:
                kernels.append(KernelChange(cid, label, "changed"))
        times.append((cid, ca.compile_time_s, cb.compile_time_s))
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
    )


def _label(c: Compile) -> str:
    from dataclasses import replace

    return str(replace(c.id, rank=None))


def _by_match_key(capture: Capture) -> dict[tuple, Compile]:
    """Key each compile by what it compiled: frame, recompile number, attempt, occurrence."""
    out: dict[tuple, Compile] = {}
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
        out[(*base, n)] = c
    return out
