"""Dynamo's graph-break messages: the breaks its counter counts, and its fallbacks to eager."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..common import OWN_HOOK_REASON
from .place import Place

FallbackScope = Literal["frame", "rest"]

# Dynamo logs every message below as a `dynamo_graph_break_reason` artifact, but counts a break
# (torch._dynamo.utils.counters["graph_break"]) only where it splits the graph and resumes:
# break_graph_if_unsupported in torch/_dynamo/symbolic_convert.py (`excp.add_to_stats(
# "graph_break")`). These messages are written elsewhere and never counted:
_FALLBACK_HEADS: tuple[tuple[str, FallbackScope], ...] = (
    # InstructionTranslator.run: the root frame could not handle the break; convert_frame
    # skips the whole frame, which runs eagerly on every call.
    ("Failed to handle graph break gracefully. Skipping the function", "frame"),
    # convert_frame.py (with graph_breaks logging on): a soft failure not logged before.
    ("Graph break: torch.compile cannot properly resume from this graph break", "frame"),
    # InstructionTranslatorBase.step: a break where no resume function can be made (inside a
    # try block, an inlined call, ...): Dynamo compiles up to the last resumable point, and
    # the rest of the frame runs eagerly. The same break, reached through a frame that could
    # split, is counted there (GPT-2's `logger.warning_once`: wrapper and loss_function).
    ("Encountered graph break that we cannot resume from.", "rest"),
)


def fallback_scope(reason: str) -> FallbackScope | None:
    """ "frame" or "rest" when Dynamo's message (the reason after "Graph Break Reason:", or the
    whole text) says it left code to eager rather than splitting the graph; None for a break.
    Only the head counts: a counted break's message may quote another one further down."""
    head = reason.lstrip()
    for words, scope in _FALLBACK_HEADS:
        if head.startswith(words):
            return scope
    return None


# torch's generic first line of a break's message: what it was tracing, not why it broke.
_TRACING_HEAD = re.compile(r"^Encountered graph break when attempting to trace .*:$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def reason_line(reason: str, width: int = 160) -> str:
    """Why the graph broke, in one line for a terminal: the first line that says why (past
    torch's "Encountered graph break when attempting to trace ...:" head), in whole sentences:
    as many as fit in `width`, the first one always whole, never cut inside a sentence."""
    lines = [line.strip() for line in reason.strip().splitlines() if line.strip()]
    if len(lines) > 1 and _TRACING_HEAD.match(lines[0]):
        lines = lines[1:]
    if not lines:
        return ""
    sentences = _SENTENCE_END.split(lines[0])
    kept = sentences[0]
    for sentence in sentences[1:]:
        if len(kept) + 1 + len(sentence) > width:
            break
        kept += " " + sentence
    return kept + (" ..." if len(kept) < len(lines[0]) else "")


@dataclass(frozen=True)
class _BreakMessage:
    """One of Dynamo's graph-break messages, at the user line it names."""

    reason: str
    location: Place | None = None
    user_stack: tuple[Place, ...] = ()
    text: str = ""  # torch's full message

    @property
    def at_own_hook(self) -> bool:
        """At one of compilescope's own hooks: the code without it has no such call."""
        return OWN_HOOK_REASON in (self.text or self.reason)


@dataclass(frozen=True)
class GraphBreak(_BreakMessage):
    """Why Dynamo broke the graph, and at which user line: one per break its counter counts."""


@dataclass(frozen=True)
class Fallback(_BreakMessage):
    """Where Dynamo left code to run eagerly instead of breaking the graph there: the whole
    frame (scope "frame": skipped, eager at every call) or the rest of it after the last
    point it could resume from (scope "rest"). Dynamo's break counter counts neither."""

    scope: FallbackScope = "frame"

    @property
    def what(self) -> str:
        """What happens, in words, for a line that names the break's place next."""
        if self.scope == "frame":
            return "whole frame falls back to eager"
        return "rest of the frame runs eagerly (cannot resume)"

    @property
    def cause(self) -> str:
        """The message of the break that made it (torch writes it after its own words)."""
        head, found, tail = self.reason.partition("Graph break encountered:")
        return tail.strip() if found and tail.strip() else self.reason


def break_message(
    reason: str,
    location: Place | None = None,
    user_stack: tuple[Place, ...] = (),
    text: str = "",
) -> GraphBreak | Fallback:
    """The record one of Dynamo's messages makes: a GraphBreak, or a Fallback by its words."""
    scope = fallback_scope(reason)
    if scope is None:
        return GraphBreak(reason, location, user_stack, text)
    return Fallback(reason, location, user_stack, text, scope)
