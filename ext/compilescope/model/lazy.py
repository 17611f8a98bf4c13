"""A tuple computed on first use: what a big log holds is only worked out when someone looks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar, overload

T_co = TypeVar("T_co", covariant=True)


class LazyTuple(Sequence[T_co]):
    """Behaves as the tuple `load()` returns (equal to it, hashing as it), made on first use.

    Used where the model keeps a tuple that costs time to compute from a log (an output
    module's kernels), so that opening a log does not pay for what nobody reads."""

    __slots__ = ("_load", "_items")

    def __init__(self, load: Callable[[], Iterable[T_co]]) -> None:
        self._load: Callable[[], Iterable[T_co]] | None = load
        self._items: tuple[T_co, ...] | None = None

    def _tuple(self) -> tuple[T_co, ...]:
        if self._items is None:
            assert self._load is not None  # dropped only once _items is set
            self._items = tuple(self._load())
            self._load = None  # drop what the loader held
        return self._items

    @overload
    def __getitem__(self, index: int) -> T_co: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T_co, ...]: ...
    def __getitem__(self, index: int | slice) -> T_co | tuple[T_co, ...]:
        return self._tuple()[index]

    def __len__(self) -> int:
        return len(self._tuple())

    def __iter__(self) -> Iterator[T_co]:
        return iter(self._tuple())

    def __contains__(self, item: object) -> bool:
        return item in self._tuple()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyTuple):
            other = other._tuple()
        return self._tuple() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._tuple())

    def __add__(self, other: Iterable[Any]) -> tuple[Any, ...]:
        return self._tuple() + tuple(other)

    def __radd__(self, other: Iterable[Any]) -> tuple[Any, ...]:
        return tuple(other) + self._tuple()

    def __repr__(self) -> str:
        return repr(self._tuple()) if self._items is not None else "LazyTuple(<not loaded>)"

    @property
    def loaded(self) -> bool:
        return self._items is not None
