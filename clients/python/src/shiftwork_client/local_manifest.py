"""A list of images on this machine's disk (``picked.txt``, ``album.list``: one image URL or path a line, ``#``
starts a comment), read by the client as ``shiftwork submit`` reads it: it becomes its entries (relative paths
resolved against the list's folder; a list it names read in turn, two levels deep at most), so that its local
photos are uploaded like any local file. The rules of an entry are the cluster's (Sources/Fetching/Manifest.swift):
a line that is not an ``http``, ``https`` or ``file`` URL nor the path of an image or of another list makes the
file no list at all, and `ValueError` names the line. A list given as a URL is left to the cluster, which expands
it while the batch runs."""

from __future__ import annotations

import os
import urllib.parse
from typing import List, Optional, Tuple

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".avif", ".heic", ".heif", ".tif", ".tiff", ".gif", ".bmp")
LIST_SUFFIXES = (".txt", ".list")
MAX_DEPTH = 2
MAX_BYTES = 32 << 20
MAX_ENTRIES = 100_000


def is_local_list(path: Optional[str]) -> bool:
    """Whether `path` (a local absolute path, or None for a URL) is a file named as a list of images."""
    return path is not None and path.lower().endswith(LIST_SUFFIXES) and os.path.isfile(path)


def read(path: str) -> Tuple[List[str], List[Optional[str]]]:
    """The entries of the list at `path` (absolute: paths, or URLs the workers fetch) with, for each, its path
    below the list's folder (None for a URL or a file outside it). `ValueError` naming the file and what is
    wrong: unreadable, too large, a line that is not an entry, lists nested too deep, too many entries."""
    entries: List[str] = []
    _read(path, 1, entries)
    folder = os.path.dirname(path)
    below = [entry[len(folder) + 1:] if entry.startswith(folder + "/") else None for entry in entries]
    return entries, below


def _read(path: str, depth: int, entries: List[str]) -> None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise ValueError(f"cannot read the list {path!r}: {error.strerror or error}: check that it exists and that "
                         f"you may read it") from None
    if len(data) > MAX_BYTES:
        raise ValueError(f"the list {path!r} is larger than {MAX_BYTES >> 20} MiB: split it into smaller lists")
    for entry in _parse(data, path):
        local = _local(entry)
        if not is_local_list(local):
            entries.append(local or entry)
            continue
        if depth >= MAX_DEPTH:
            raise ValueError(f"the list {path!r} names another list, {entry!r}, nested deeper than {MAX_DEPTH} "
                             f"levels: list its images directly")
        _read(local, depth + 1, entries)
    if len(entries) > MAX_ENTRIES:
        raise ValueError(f"the list {path!r} and the lists it names hold more than {MAX_ENTRIES} entries: submit "
                         f"them in parts")


def _parse(data: bytes, path: str) -> List[str]:
    def refuse(why: str) -> ValueError:
        return ValueError(f"{path!r} is not a list of images: {why}; give one image URL or path a line "
                          f"(# starts a comment)")
    if b"\0" in data:
        raise refuse("it is not text (UTF-8 without NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise refuse("it is not text (UTF-8 without NUL bytes)") from None
    entries = []
    for number, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        line = raw.strip(" \t")
        if not line or line.startswith("#"):
            continue
        entry = _resolve(line, path)
        if entry is None:
            shown = line if len(line) <= 80 else line[:80] + "…"
            raise refuse(f"line {number} ({shown}) is neither an http, https or file URL nor the path of an image "
                         f"({' '.join(IMAGE_SUFFIXES)}) or of another list ({' '.join(LIST_SUFFIXES)})")
        entries.append(entry)
    if not entries:
        raise refuse("it lists no image (only blank lines and # comments)")
    return entries


def _resolve(entry: str, path: str) -> Optional[str]:
    lower = entry.lower()
    if lower.startswith(("http://", "https://", "file://")):
        return None if any(c.isspace() for c in entry) else entry
    if "://" in entry or entry.startswith("<"):
        return None
    if not lower.split("?")[0].endswith(IMAGE_SUFFIXES + LIST_SUFFIXES):
        return None
    return os.path.normpath(entry if entry.startswith("/") else os.path.join(os.path.dirname(path), entry))


def _local(entry: str) -> Optional[str]:
    if entry.startswith("/"):
        return entry
    parts = urllib.parse.urlsplit(entry)
    if parts.scheme.lower() == "file" and parts.path:
        return os.path.normpath(urllib.parse.unquote(parts.path))
    return None
