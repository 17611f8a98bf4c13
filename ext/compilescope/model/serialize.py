"""The capture's versioned JSON format: lossless encode/decode of the model's dataclasses."""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any, TypeVar, cast

from .compile_id import CompileId
from .graph import Graph, Node, TensorMeta
from .lazy import LazyTuple

FORMAT = "compilescope.capture"
VERSION = 1

T = TypeVar("T")


class FormatError(ValueError):
    """A JSON document that is not a capture this version of compilescope can read."""


def encode(value: object) -> object:
    """Model object -> JSON-ready value (dicts, lists, strings, numbers)."""
    if isinstance(value, CompileId):
        return str(value)
    if isinstance(value, TensorMeta):
        return str(value)
    if isinstance(value, Graph):
        return {
            "kind": value.kind,
            "text": value.text,
            "metadata": value.metadata,
            "nodes": [encode(n) for n in value.nodes],
        }
    if dataclasses.is_dataclass(value):
        out = {}
        for f in dataclasses.fields(value):
            if f.metadata.get("json") is False:
                continue  # a live object (the partition lab): never serialized
            # A field may be written from a property that adds what live objects made.
            item = getattr(value, f.metadata.get("json_from", f.name))
            if item != _default(type(value), f.name):  # keep files small: omit defaults
                out[f.name] = encode(item)
        return out
    if isinstance(value, (tuple, list, LazyTuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    return value


def decode(cls: type, data: object, where: str = "$") -> object:
    """JSON value -> instance of `cls` (a model dataclass or a typing form of one)."""
    origin = typing.get_origin(cls)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(cls) if a is not type(None)]
        if data is None:
            return None
        return decode(options[0], data, where)
    if origin is tuple:
        (item_type, *_rest) = typing.get_args(cls)
        items = _expect(data, list, where)
        return tuple(decode(item_type, v, f"{where}[{i}]") for i, v in enumerate(items))
    if origin is dict:
        key_type, value_type = typing.get_args(cls)
        mapping = _expect(data, dict, where)
        return {k: decode(value_type, v, f"{where}.{k}") for k, v in mapping.items()}
    if cls is CompileId:
        text = _expect(data, str, where)
        try:
            return CompileId.parse(text)
        except ValueError as error:
            raise FormatError(f"{where}: {error}") from None
    if cls is TensorMeta:
        text = _expect(data, str, where)
        metas = TensorMeta.parse_all(text)
        if len(metas) != 1:
            raise FormatError(f"{where}: not a tensor description: {data!r}")
        return metas[0]
    if cls is Graph:
        fields = _expect(data, dict, where)
        nodes = [
            cast(Node, decode(Node, n, f"{where}.nodes[{i}]"))
            for i, n in enumerate(fields.get("nodes", []))
        ]
        return Graph(
            fields.get("kind", ""), fields.get("text", ""), nodes, metadata=fields.get("metadata")
        )
    if dataclasses.is_dataclass(cls):
        fields = _expect(data, dict, where)
        hints = _hints(cls)
        kwargs = {}
        for name, value in fields.items():
            if name not in hints:
                continue  # a newer writer's field: ignore, as torch's own readers do
            kwargs[name] = decode(hints[name], value, f"{where}.{name}")
        return cls(**kwargs)
    if cls is float and isinstance(data, int):
        return float(data)
    if cls in (str, int, float, bool) and not isinstance(data, cls):
        raise FormatError(f"{where}: expected {cls.__name__}, got {type(data).__name__}")
    return data


def _expect(data: object, kind: type[T], where: str) -> T:
    if not isinstance(data, kind):
        raise FormatError(f"{where}: expected {kind.__name__}, got {type(data).__name__}")
    return data


@cache
def _hints(cls: type) -> dict[str, type]:
    return typing.get_type_hints(cls, localns=_type_only_names())


@cache
def _type_only_names() -> dict[str, type]:
    """Field types the model's modules import for type checkers only (capture.py, compile.py:
    they import these modules where used, to keep a one-rank log's report light, issue 34)."""
    from .measured.held_memory import HeldMemory
    from .measured.timing import Timings

    return {"HeldMemory": HeldMemory, "Timings": Timings}


@cache
def _defaults(cls: type) -> dict[str, object]:
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


_NO_DEFAULT = object()


def _default(cls: type, name: str) -> object:
    return _defaults(cls).get(name, _NO_DEFAULT)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the capture format (capture.schema.json in this package)."""
    import json
    from importlib.resources import files

    schema: dict[str, Any] = json.loads(
        files(__package__).joinpath("capture.schema.json").read_text("utf-8")
    )
    return schema
