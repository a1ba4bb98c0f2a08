"""Text from the network or a file system made safe to print on a terminal, as Swift's `PrintableText`
escapes it: a newline would forge a line, an escape sequence steer the terminal, a bidirectional override
reorder what a reader sees."""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _needs_escape(code: int) -> bool:
    return (code <= 0x1F or 0x7F <= code <= 0x9F or code in (0x061C, 0x200E, 0x200F, 0x2028, 0x2029)
            or 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069)


def printable(text: str) -> str:
    """`text` with every C0 and C1 control, DEL, bidirectional mark or override and line or paragraph
    separator written as an escape (``\\n``, ``\\r``, ``\\t``, else ``\\u{XX}``); everything else, non-ASCII
    letters included, unchanged. Use it (after `redact_urls` or `redact_source`) on sources, messages and file
    names before printing them."""
    if not any(_needs_escape(ord(character)) for character in text):
        return text
    return "".join(_escaped(character) for character in text)


def _escaped(character: str) -> str:
    if character in _NAMED:
        return _NAMED[character]
    return f"\\u{{{ord(character):X}}}" if _needs_escape(ord(character)) else character
