"""An offline reply as a plug-in (lilo's one plug-in shape, tasks/registry.py): a module
registers the function that answers one kind of prompt with `@offline_reply(name,
matches=...)`. The engine tries the registered replies by `priority`, then by name, and the
first whose `matches(prompt)` accepts the prompt answers it (tasks/llm/offline/_reply.py).

The replies are found in this package, in the methods' (`tasks/methods/`) and in the probe
tasks' (`tasks/probes/kinds/`): a method or a probe task whose prompts need a reply of their
own carries it in its file. A reply is a pure function of the messages and the engine's
settings (`OfflineSettings`), computed in the engine's worker processes, which find the
replies again on their first call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.types import Message
from lilo.tasks.registry import Registry

__all__ = ["OfflineReply", "Respond", "offline_reply", "offline_replies"]

Respond = Callable[[list[Message], OfflineSettings], str]


@dataclass(frozen=True)
class OfflineReply:
    """`matches(prompt)` says whether `respond(messages, offline)` answers the prompt (the
    messages' contents joined by newlines); a lower `priority` is tried first (the bare task
    instruction, which Single sends, is the last resort)."""

    name: str
    matches: Callable[[str], bool]
    respond: Respond
    priority: int = 0


_REPLIES: Registry[OfflineReply] = Registry(
    "offline reply",
    __package__,
    "decorate the function that answers it with @offline_reply({name!r}, matches=...) "
    "(tasks/llm/offline/base.py)",
    also=("lilo.tasks.methods", "lilo.tasks.probes.kinds"),
)


def offline_reply(
    name: str, *, matches: Callable[[str], bool], priority: int = 0
) -> Callable[[Respond], Respond]:
    """Register the decorated function as the engine's reply to the prompts `matches`
    accepts."""

    def register(respond: Respond) -> Respond:
        _REPLIES.add(name, OfflineReply(name, matches, respond, priority), respond.__module__)
        return respond

    return register


def offline_replies() -> list[OfflineReply]:
    """The registered replies in the order the engine tries them."""
    replies = [_REPLIES.get(name) for name in _REPLIES.names()]
    return sorted(replies, key=lambda r: r.priority)
