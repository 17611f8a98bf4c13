"""The explorer's group tree: module paths, gathered inputs, tangents and constants, runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ...model.graph import Node

# Items laid out side by side inside one group; more are split into blocks of topological order.
GROUP_LIMIT = 100
# More inputs than this in one group fold into a closed "inputs" group, so that a row of
# parameters does not set the drawing's width (and scale).
FOLD_INPUTS = 5
INPUT_OPS = ("placeholder", "get_attr")
# A joint graph's or a partition's two halves (module_groups.sides, stage_graphs.partition_graph).
SIDES = ("forward", "backward")


@dataclass
class Group:
    """A box of the explorer's group tree: a module, or gathered inputs, tangents, constants
    or a run of nodes. (A docstring also spares dataclass its signature-built one.)"""

    label: str
    parent: int
    closed: bool = False  # starts closed even when the graph is small (folded inputs)
    members: list[int] = field(default_factory=list)  # node indices directly inside
    children: list[int] = field(default_factory=list)  # group indices directly inside
    first: int = 0  # smallest node index inside (topological position)
    start: int = 0  # smallest index of an op inside (its inputs, placeholders, come first)
    size: int = 0  # nodes inside, all levels
    path: str = ""  # the module path it stands for (`transformer.h.3`); else its label
    module: bool = True  # a module of the model (else: gathered inputs, a run of nodes)


def short_target(node: Node) -> str:
    target = node.target
    for prefix in ("torch.ops.aten.", "torch.ops.prims.", "torch.ops."):
        if target.startswith(prefix):
            target = target[len(prefix) :]
            break
    return target.removesuffix(".default")


def _module_parts(path: str | None) -> tuple[str, ...]:
    if not path:
        return ()
    parts = tuple(p for p in path.replace("/", ".").split(".") if p)
    # A module called through a bound method (`capture(model, x)` compiles `fn = model`) logs
    # paths like `fn.__self__.self_attn`: the part up to `__self__` names our wrapper, not the model.
    if "__self__" in parts:
        parts = parts[len(parts) - parts[::-1].index("__self__") :]
    return parts


def _is_tangent(node: Node) -> bool:
    return node.op == "placeholder" and node.name.rsplit(".", 1)[-1].startswith("tangents_")


def _gathered(
    nodes: Sequence[Node], direct: list[int], others: int, constants: bool
) -> list[tuple[str, list[int], bool]]:
    """The closed boxes a group's loose nodes gather into: tangents (the backward's incoming
    gradients), many inputs, and `full`-like constants, each drawn as one box with its edges
    instead of a row of boxes with long edges across the drawing. `others`: the group's other
    items (a box is worth it only beside them). Each with whether it stays closed when a small
    graph opens whole (inputs do: a row of parameters would set the drawing's width)."""
    tangents = [i for i in direct if _is_tangent(nodes[i])]
    if len(tangents) < 2:
        tangents = []
    apart = set(tangents)
    inputs = [i for i in direct if nodes[i].op in INPUT_OPS and i not in apart]
    loose = [i for i in direct if nodes[i].op == "call_function" and not nodes[i].inputs]
    loose = loose if constants else []
    out = []
    rest = len(direct) + others
    if len(inputs) > FOLD_INPUTS and len(inputs) < rest:
        out.append((f"{len(inputs)} inputs", inputs, True))
    if tangents and len(tangents) < rest:
        out.append((f"{len(tangents)} tangents", tangents, False))
    if len(loose) > 1 and len(loose) < rest:
        out.append((f"{len(loose)} constants", loose, False))
    return out


def _runs(
    nodes: Sequence[Node], direct: list[int], starts: list[int]
) -> list[tuple[str, list[int], bool]]:
    """A module's own ops beside its submodules (GPT-2's `transformer` computes position ids
    and the attention mask itself), gathered by runs: the ops between one submodule's first op
    and the next one's, in topological order. Each run is one box, so a module's few ops do not
    stack a layer each above its submodules."""
    computing = sorted(i for i in direct if nodes[i].op not in (*INPUT_OPS, "output"))
    bounds = sorted(set(starts))
    out: list[tuple[str, list[int], bool]] = []
    run: list[int] = []
    at = 0
    for i in computing + [len(nodes)]:
        crossed = False
        while at < len(bounds) and bounds[at] < i:
            at, crossed = at + 1, True
        if crossed or i == len(nodes):
            if len(run) > 1:
                out.append((_run_label(nodes, run), run, True))
            run = []
        run.append(i)
    return out


def build_groups(
    nodes: Sequence[Node], paths: Sequence[str | None] | None = None, *, runs: bool = False
) -> list[Group]:
    """Group 0 is the root. Module paths make the tree (`paths` overrides the nodes' own);
    many inputs, tangents and constants gather into closed groups, and with `runs` so do a
    module's own ops beside its submodules; oversized levels split into runs named by their
    sources."""
    groups = [Group("", -1, first=0)]
    if paths is None:
        paths = [n.module_path for n in nodes]
    split: dict[str | None, tuple[str, ...]] = {}  # a graph repeats a few paths many times
    parts = [split[p] if p in split else split.setdefault(p, _module_parts(p)) for p in paths]

    def fill(gid: int, members: list[int], depth: int) -> None:
        by_child: dict[str, list[int]] = {}
        direct = []
        for i in members:
            if len(parts[i]) > depth:
                by_child.setdefault(parts[i][depth], []).append(i)
            else:
                direct.append(i)
        for key, inside in by_child.items():
            if len(inside) == 1:
                direct.append(inside[0])
                continue
            label, level = key, depth + 1
            # Fold chains like transformer -> h into one group "transformer.h" (not a graph's
            # forward and backward halves: they stay two boxes with those names).
            while not (depth == 0 and key in SIDES):
                nxt = {parts[i][level] if len(parts[i]) > level else None for i in inside}
                step = nxt.pop() if len(nxt) == 1 else None
                if step is None:
                    break
                label += "." + step
                level += 1
            child = len(groups)
            path = f"{groups[gid].path}.{label}" if groups[gid].path else label
            ops = [i for i in inside if nodes[i].op not in INPUT_OPS]
            groups.append(Group(label, gid, first=min(inside), start=min(ops or inside), path=path))
            groups[gid].children.append(child)
            fill(child, inside, level)
        # Inside a module, constants join the runs of its own ops (they feed them).
        inner_runs = runs and bool(groups[gid].children)
        boxes = _gathered(nodes, direct, len(groups[gid].children), gid == 0 or not inner_runs)
        taken = {i for _, inside, _ in boxes for i in inside}
        direct = [i for i in direct if i not in taken]
        if inner_runs:
            boxes += _runs(nodes, direct, [groups[c].start for c in groups[gid].children])
            taken = {i for _, inside, _ in boxes for i in inside}
            direct = [i for i in direct if i not in taken]
        for label, inside, closed in boxes:
            child = len(groups)
            groups.append(Group(label, gid, closed=closed, first=min(inside), path=label,
                                module=False, members=inside))  # fmt: skip
            groups[gid].children.append(child)
        groups[gid].members = sorted(direct)
        _split_oversized(groups, gid, nodes)

    fill(0, list(range(len(nodes))), 0)
    # Blocks made by splitting come after the groups they hold: sizes children first, by order.
    for gid in post_order(groups):
        g = groups[gid]
        g.size = len(g.members) + sum(groups[c].size for c in g.children)
    return groups


def post_order(groups: list[Group]) -> list[int]:
    out, stack = [], [(0, False)]
    while stack:
        gid, done = stack.pop()
        if done:
            out.append(gid)
            continue
        stack.append((gid, True))
        stack.extend((c, False) for c in groups[gid].children)
    return out


def nodes_inside(groups: list[Group]) -> list[list[int]]:
    """Every node index inside each group, all levels (children come after their parents)."""
    inside = [list(g.members) for g in groups]
    for gid in post_order(groups):
        if gid:
            inside[groups[gid].parent].extend(inside[gid])
    return inside


def _run_label(nodes: Sequence[Node], members: list[int]) -> str:
    """What a run of nodes is, in the user's words: the source lines it spans when they differ,
    else the operations it does most (never positions)."""
    where = [s for i in members if (s := nodes[i].source)]
    lines = sorted({(w.function, w.line) for w in where})
    if len(lines) > 1:
        functions = list(dict.fromkeys(f for f, _ in lines if f))
        fn = (
            (functions[0] + (f" +{len(functions) - 1}" if len(functions) > 1 else "") + " ")
            if functions
            else ""
        )
        return f"{fn}lines {lines[0][1]}\u2013{lines[-1][1]}"
    counts: dict[str, int] = {}
    for i in members:
        if nodes[i].op not in ("placeholder", "output", "get_attr"):
            target = short_target(nodes[i]).split(".")[0]
            counts[target] = counts.get(target, 0) + 1
    top = sorted(counts, key=lambda t: -counts[t])[:3]
    if top:
        return ", ".join(top) + ("\u2026" if len(counts) > 3 else "")
    return f"{nodes[members[0]].name} \u2026 {nodes[members[-1]].name}" if members else "group"


def _split_oversized(groups: list[Group], gid: int, nodes: Sequence[Node]) -> None:
    """Too many items in one group: put consecutive items (topological order) into runs."""
    group = groups[gid]
    items = sorted(
        [("n", i, i) for i in group.members] + [("g", c, groups[c].first) for c in group.children],
        key=lambda item: item[2],
    )
    if len(items) <= GROUP_LIMIT:
        return
    # At most GROUP_LIMIT blocks; a block still too big is split again (blocks of blocks).
    blocks = min(GROUP_LIMIT, -(-len(items) // GROUP_LIMIT))
    per_block = -(-len(items) // blocks)
    group.members, group.children = [], []
    for start in range(0, len(items), per_block):
        chunk = items[start : start + per_block]
        block = len(groups)
        inside = [i for kind, i, _ in chunk if kind == "n"]
        label = _run_label(nodes, inside or [chunk[0][2]])
        groups.append(Group(label, gid, first=chunk[0][2], path=label, module=False))
        group.children.append(block)
        groups[block].members = [i for kind, i, _ in chunk if kind == "n"]
        for kind, i, _ in chunk:
            if kind == "g":
                groups[block].children.append(i)
                groups[i].parent = block
        _split_oversized(groups, block, nodes)
