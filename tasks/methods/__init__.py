"""Generation methods (docs/design.md §7): Single, AgentWrite, Compress, RAL-Writer, as plug-ins."""

from lilo.tasks.methods.base import (
    Draft,
    Method,
    MethodError,
    Run,
    Unit,
    Writer,
    available_methods,
    get_method,
    method,
)

__all__ = [
    "Draft",
    "Method",
    "MethodError",
    "Run",
    "Unit",
    "Writer",
    "available_methods",
    "get_method",
    "method",
]
