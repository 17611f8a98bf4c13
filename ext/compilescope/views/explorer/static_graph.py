"""A graph as a script-free SVG picture, placed from the same per-group layouts the explorer uses."""

from __future__ import annotations

from html import escape
from typing import Any

# Box sizes in CSS px at scale 1, sent to the explorer with each graph (payload["sizes"]).
NODE_W, NODE_H, HGAP, VGAP, PAD, LABEL = 176, 32, 18, 16, 8, 18
COL = NODE_W + HGAP
SIZES = {"node_w": NODE_W, "node_h": NODE_H, "hgap": HGAP, "vgap": VGAP, "pad": PAD,
         "label": LABEL}  # fmt: skip


def place(payload: dict[str, Any], expanded: set[int]) -> list[dict[str, Any]]:
    """Boxes of what is visible when the groups in `expanded` are open (root always is)."""
    groups = payload["groups"]

    def size_of(gid: int) -> dict[str, Any]:
        grp = groups[gid]
        sizes = []
        for item in grp["items"]:
            child = -1 - item
            if item < 0 and child in expanded:
                sizes.append(size_of(child))
            else:
                sizes.append({"w": NODE_W, "h": NODE_H, "collapsed": item < 0})
        ys, xs = grp["y"], grp["x"]
        layer_h: dict[int, float] = {}
        for y, size in zip(ys, sizes, strict=True):
            h, now = size["h"], layer_h.get(y, 0)
            layer_h[y] = h if h > now else now  # max(now, h), as comparisons: a hot loop
        layer_y, y = {}, (0 if gid == 0 else LABEL + PAD)
        for layer in range(max(layer_h, default=-1) + 1):
            layer_y[layer] = y
            y += layer_h.get(layer, 0) + VGAP
        right: dict[int, float] = {}
        pos: list[dict[str, Any] | None] = [None] * len(sizes)
        width = 0.0
        left = 0 if gid == 0 else PAD
        # By layer, then x (then item: the order a stable sort by (y, x) keeps).
        for layer, column, j in sorted(zip(ys, xs, range(len(sizes)), strict=True)):
            x = left + column * COL
            if layer in right:
                after = right[layer] + HGAP
                x = after if after > x else x
            size = sizes[j]
            end = right[layer] = x + size["w"]
            pos[j] = {**size, "x": x, "y": layer_y[layer]}  # tops aligned: side by side, level
            width = end if end > width else width
        pad = 0 if gid == 0 else PAD
        return {"w": width + pad, "h": y - VGAP + pad, "pos": pos, "gid": gid}

    boxes: list[dict[str, Any]] = []

    def absolute(placed: dict[str, Any], ox: float, oy: float) -> None:
        for item, p in zip(groups[placed["gid"]]["items"], placed["pos"], strict=True):
            x, y = ox + p["x"], oy + p["y"]
            if item >= 0:
                boxes.append({"kind": "node", "id": item, "x": x, "y": y, "w": p["w"], "h": p["h"]})
            else:
                is_open = "pos" in p
                boxes.append(
                    {
                        "kind": "group",
                        "id": -1 - item,
                        "x": x,
                        "y": y,
                        "w": p["w"],
                        "h": p["h"],
                        "open": is_open,
                    }  # fmt: skip
                )
                if is_open:
                    absolute(p, x, y)

    absolute(size_of(0), 0.0, 0.0)
    return boxes


def graph_svg(payload: dict[str, Any], *, max_width: int = 900) -> str:
    """The graph's first picture: the boxes the explorer paints first (payload["placed"])."""
    groups = payload["groups"]
    expanded = {gid for gid, g in enumerate(groups) if g.get("open", gid == 0)}
    boxes = [
        {"kind": "node", "id": item, "x": x, "y": y, "w": w, "h": h}
        if item >= 0
        else {"kind": "group", "id": -1 - item, "x": x, "y": y, "w": w, "h": h,
              "open": (-1 - item) in expanded}
        for item, x, y, w, h in payload["placed"]
    ]  # fmt: skip
    node_box = {b["id"]: i for i, b in enumerate(boxes) if b["kind"] == "node"}
    group_box = {b["id"]: i for i, b in enumerate(boxes) if b["kind"] == "group"}
    owner = {}
    for gid, grp in enumerate(groups):
        for item in grp["items"]:
            if item >= 0:
                owner[item] = gid

    def rep(v: int) -> int | None:
        if v in node_box:
            return node_box[v]
        gid, closed = owner.get(v, 0), None
        while gid > 0:
            if gid not in expanded:
                closed = gid
            gid = groups[gid]["parent"]
        return group_box.get(closed) if closed is not None else None

    width = max((b["x"] + b["w"] for b in boxes), default=0) + 10
    height = max((b["y"] + b["h"] for b in boxes), default=0) + 10
    scale = min(1.0, max_width / width) if width else 1.0
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width * scale:.0f}' height='{height * scale:.0f}' "
        f"viewBox='0 0 {width:.0f} {height:.0f}' font-family='monospace' font-size='11'>"
    ]
    for b in boxes:
        if b["kind"] == "group" and b["open"]:
            out.append(
                f"<rect x='{b['x']:.1f}' y='{b['y']:.1f}' width='{b['w']:.1f}' height='{b['h']:.1f}' "
                f"fill='#f4f4fa' stroke='#b4b4c8'/><text x='{b['x'] + 6:.1f}' y='{b['y'] + 13:.1f}' "
                f"fill='#555'>{escape(group_text(groups, b['id']))}</text>"
            )
    seen = set()
    for v, inputs in enumerate(payload["in"]):
        for u in inputs:
            src, dst = rep(u), rep(v)
            if src is None or dst is None or src == dst or (src, dst) in seen:
                continue
            seen.add((src, dst))
            sx, sy, ax, ay, bx, by, tx, ty = edge_curve(boxes[src], boxes[dst])
            out.append(
                f"<path d='M{sx:.1f},{sy:.1f} C{ax:.1f},{ay:.1f} {bx:.1f},{by:.1f} "
                f"{tx:.1f},{ty:.1f}' fill='none' stroke='#9aa0a6'/>"
            )
    strings = payload["strings"]
    for b in boxes:
        if b["kind"] == "group" and not b["open"]:
            grp = groups[b["id"]]
            out.append(
                f"<rect x='{b['x']:.1f}' y='{b['y']:.1f}' width='{b['w']}' height='{b['h']}' fill='#eef2ff' "
                f"stroke='#6366f1'/><text x='{b['x'] + 6:.1f}' y='{b['y'] + 13:.1f}'>{escape(_clip(group_text(groups, b['id'])))}</text>"
                f"<text x='{b['x'] + 6:.1f}' y='{b['y'] + 26:.1f}' fill='#555'>{grp['size']} nodes, {grp.get('ops', 0)} ops</text>"
            )
        elif b["kind"] == "node":
            v = b["id"]
            op = payload["op"][v]
            what = strings[payload["target"][v]] if op == 1 else payload["ops"][op]
            out.append(
                f"<rect x='{b['x']:.1f}' y='{b['y']:.1f}' width='{b['w']}' height='{b['h']}' "
                f"fill='{'#dbeafe' if op == 0 else '#ffffff'}' stroke='#6b7280'/>"
                f"<text x='{b['x'] + 5:.1f}' y='{b['y'] + 13:.1f}'>{escape(_clip(payload['names'][v]))}</text>"
                f"<text x='{b['x'] + 5:.1f}' y='{b['y'] + 26:.1f}' fill='#4b5563'>{escape(_clip(what))}</text>"
            )
    out.append("</svg>")
    return "".join(out)


def edge_curve(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, ...]:
    """The cubic curve of the edge from box `a` to box `b` (start, two controls, end): down
    from a's bottom to b's top when b is below a, else between their sides (placement.js's
    edgeCurve: the same curve)."""
    if b["y"] >= a["y"] + a["h"]:
        sx, sy, tx, ty = a["x"] + a["w"] / 2, a["y"] + a["h"], b["x"] + b["w"] / 2, b["y"]
        bend = max(20.0, abs(ty - sy) / 2)
        return (sx, sy, sx, sy + bend, tx, ty - bend, tx, ty)
    right = b["x"] + b["w"] / 2 >= a["x"] + a["w"] / 2
    sx, sy = (a["x"] + a["w"] if right else a["x"]), a["y"] + a["h"] / 2
    beside = b["x"] >= a["x"] + a["w"] if right else b["x"] + b["w"] <= a["x"]
    tx, ty = (b["x"] if right == beside else b["x"] + b["w"]), b["y"] + b["h"] / 2
    out = (1 if right else -1) * max(30.0, abs(tx - sx) / 2)
    return (sx, sy, sx + out, sy, tx - out if beside else tx + out, ty, tx, ty)


def group_text(groups: list[dict[str, Any]], gid: int) -> str:
    """What a group's box says: its label, or `h.3` for a layer numbered `3` inside `h`."""
    grp = groups[gid]
    label: str = grp["label"]
    if not (label.isascii() and label.isdigit()) or not grp.get("path"):
        return label
    return ".".join(grp["path"].split(".")[-2:])


def _clip(text: str, n: int = 24) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"
