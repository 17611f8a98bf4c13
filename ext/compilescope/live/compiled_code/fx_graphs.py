"""A live torch.fx.GraphModule or torch.export.ExportedProgram as the model's Graph."""

from __future__ import annotations

from ...model.graph import Graph
from ...trace.graph_text import parse_graph_nodes


def graph_from_torch(obj: object, kind: str = "") -> Graph:
    """Read a GraphModule or ExportedProgram through the text torch prints (print_readable).

    The same parser as for trace logs reads it, so the explorer shows shapes, dtypes, source lines
    and module paths exactly as for a capture. Nothing is run.
    """
    import torch

    module = obj.graph_module if hasattr(obj, "graph_module") else obj
    if not isinstance(module, torch.fx.GraphModule):
        raise TypeError(
            "explore() takes a capture's Graph, a torch.fx.GraphModule or a "
            f"torch.export.ExportedProgram, not {type(obj).__name__}"
        )
    text = module.print_readable(print_output=False, include_stride=True, include_device=True)
    nodes = parse_graph_nodes(text)
    if not nodes:  # a graph without tensor metadata still has its structure in the FX graph
        text = module.print_readable(print_output=False)
        nodes = parse_graph_nodes(text)
    return Graph(kind or ("export" if module is not obj else "graph_module"), text, nodes)
