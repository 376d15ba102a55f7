"""Text from outside lilo (papers, model replies, endpoint errors, file names in a clone) as
it may be printed on a terminal: a paper or a reply can hold control sequences that drive the
terminal (OSC 52 writes the clipboard, `ESC[2J` clears the screen, OSC 0 sets the window
title) or reorder what is shown (bidirectional overrides). `printable` makes each of them
visible as `\\uXXXX` (a form JSON reads too), and everything lilo prints that it did not write
itself goes through it; `PrintableRecords` does the same for log records."""

from __future__ import annotations

import logging
import re

__all__ = ["PrintableRecords", "printable"]

# C0 and C1 controls and DEL; the bidirectional controls (Unicode's Bidi_Control).
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# What breaks a line (or a tab-separated row), with the blanks around it.
_BREAK = re.compile(r"[ ]*[\t\n\v\f\r\x85\u2028\u2029][\t\n\v\f\r\x85\u2028\u2029 ]*")
_KEPT = {"\n", "\t"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return char if char in _KEPT else f"\\u{ord(char):04x}"


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: object, *, one_line: bool = False, markup: bool = False) -> str:
    """`text` safe to print: every control character shown as `\\uXXXX` (newlines and tabs
    kept, unless `one_line`: then each line break or tab, with the blanks around it, is one
    space, so a row stays one row); with `markup`, rich's markup escaped as well, for text
    printed through a rich console."""
    shown = str(text)
    if one_line:
        shown = _UNSAFE.sub(_escaped, _BREAK.sub(" ", shown))
    else:
        shown = _UNSAFE.sub(_visible, shown)
    if markup:
        from rich.markup import escape

        shown = escape(shown)
    return shown


class PrintableRecords(logging.Filter):
    """A handler's filter: each record's message printable and on one line (a reply or an
    error quoted in a log line can neither drive the terminal nor forge a line of its own)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        safe = printable(message, one_line=True)
        if safe != message:
            record.msg, record.args = safe, None
        return True
