"""A tuple computed on first use: what a big log holds is only worked out when someone looks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence


class LazyTuple(Sequence):
    """Behaves as the tuple `load()` returns (equal to it, hashing as it), made on first use.

    Used where the model keeps a tuple that costs time to compute from a log (an output
    module's kernels), so that opening a log does not pay for what nobody reads."""

    __slots__ = ("_load", "_items")

    def __init__(self, load: Callable[[], Iterable]) -> None:
        self._load: Callable[[], Iterable] | None = load
        self._items: tuple | None = None

    def _tuple(self) -> tuple:
        if self._items is None:
            self._items = tuple(self._load())
            self._load = None  # drop what the loader held
        return self._items

    def __getitem__(self, index):
        return self._tuple()[index]

    def __len__(self) -> int:
        return len(self._tuple())

    def __iter__(self) -> Iterator:
        return iter(self._tuple())

    def __contains__(self, item: object) -> bool:
        return item in self._tuple()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyTuple):
            other = other._tuple()
        return self._tuple() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._tuple())

    def __add__(self, other: tuple) -> tuple:
        return self._tuple() + tuple(other)

    def __radd__(self, other: tuple) -> tuple:
        return tuple(other) + self._tuple()

    def __repr__(self) -> str:
        return repr(self._tuple()) if self._items is not None else "LazyTuple(<not loaded>)"

    @property
    def loaded(self) -> bool:
        return self._items is not None
