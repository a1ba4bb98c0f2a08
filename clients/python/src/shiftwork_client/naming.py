"""Output names for a batch's items, as `shiftwork submit` chooses them (tree or flat), and the rule an output
name must keep before anything is written under it."""

from __future__ import annotations

import os
import re
import unicodedata
import urllib.parse
from typing import List, Optional, Sequence, Set, Tuple


def output_names(sources: Sequence[str], paths_in_directories: Optional[Sequence[Optional[str]]] = None,
                 flat: bool = False) -> List[str]:
    """The output name of each source, in order, as ``shiftwork submit`` gives them (``OutputNaming.names``):
    decided before the batch is sent, whatever order the outputs finish in.

    By default (the CLI's tree layout) a source that came from a directory is named by its path inside that
    directory without the extension (`paths_in_directories`: ``2024/01/IMG_0001.HEIC`` gives
    ``2024/01/IMG_0001``), a source given by itself by its last path component (``street`` for
    ``https://example.org/a/street.jpg``; a URL's percent-decoded, a path's as it is). Characters are kept,
    except NUL and other control characters, a ``/`` inside a component and a leading ``.``, which become
    ``_``; a component is cut to fit the bounds of an output path, and a path too long or too deep for them
    keeps its last component only. With `flat` (``--flat``) every name is the last component made of
    ``A-Z a-z 0-9 . _ -``. Names that are the same without case get ``-2``, ``-3``, … in input order."""
    inside = list(paths_in_directories or [])
    taken = _DistinctNames()
    names: List[str] = []
    for index, source in enumerate(sources):
        if flat:
            names.append(taken.claim(_flat_stem(source)))
            continue
        in_directory = inside[index] if index < len(inside) else None
        components = in_directory.split("/") if in_directory else [_last_component(source, decode_paths=False)]
        components = [component for component in components if component] or [""]
        file = _safe_component(_without_extension(components[-1]), fallback="image")
        folders = [_safe_component(component, fallback="_") for component in components[:-1]]
        # Room for a `-N` suffix within the bound of the whole name.
        if len(folders) + 1 > MAX_DEPTH or len("/".join(folders + [file]).encode()) > MAX_NAME_BYTES - 16:
            folders = []
        names.append(taken.claim("/".join(folders + [file])))
    return names


class _DistinctNames:
    """Names handed out once each, compared without case: a name taken comes back with ``-2``, ``-3``, …"""

    def __init__(self) -> None:
        self._used: Set[str] = set()

    def claim(self, base: str) -> str:
        candidate, counter = base, 2
        while candidate.lower() in self._used:
            candidate, counter = f"{base}-{counter}", counter + 1
        self._used.add(candidate.lower())
        return candidate


def _last_component(source: str, decode_paths: bool) -> str:
    """The last path component of `source`: an http(s) or file URL's, percent-decoded (its host when its path
    is empty); a path's, percent-decoded only with `decode_paths` (as the flat names are)."""
    if "://" in source:
        parts = urllib.parse.urlsplit(source)
        if parts.scheme.lower() in ("http", "https", "file"):
            component = parts.path.rstrip("/").rpartition("/")[2]
            return urllib.parse.unquote(component) if component else (parts.hostname or "")
    component = source.rstrip("/").rpartition("/")[2] if source.strip("/") else source
    return urllib.parse.unquote(component) if decode_paths else component


def _without_extension(name: str) -> str:
    """`name` without its extension (a leading dot is no extension's)."""
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


def _safe_component(component: str, fallback: str) -> str:
    """`component` as one safe path component: control characters and ``/`` become ``_``, a leading ``.``
    becomes ``_``, cut to leave room for a ``-N`` suffix and an extension."""
    safe = "".join("_" if character == "/" or unicodedata.category(character) == "Cc" else character
                   for character in component)
    if safe.startswith("."):
        safe = "_" + safe[1:]
    while len(safe.encode()) > MAX_COMPONENT_BYTES - 20:
        safe = safe[:-1]
    return safe or fallback


def _flat_stem(source: str) -> str:
    """The flat name of `source`: its last component without extension, every character outside
    ``A-Z a-z 0-9 . _ -`` replaced by ``_``, no leading dot, at most 100 characters, never empty."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", _without_extension(_last_component(source, decode_paths=True)))
    stem = stem.lstrip(".")[:100]
    return "image" if not stem or set(stem) <= {"_", "."} else stem


MAX_NAME_BYTES = 1024
MAX_COMPONENT_BYTES = 200
MAX_DEPTH = 32


def output_path_problem(name: str) -> Optional[str]:
    """What is wrong with `name` as a relative output path (the rule `shiftwork` applies, OutputPath.swift),
    or None: not empty, not absolute, no ``.`` or ``..`` or hidden component, no NUL or other control
    character, at most 1,024 bytes, 32 components of at most 200 bytes each."""
    if not name:
        return "the output has no name"
    if len(name.encode()) > MAX_NAME_BYTES:
        return f"the output name is longer than {MAX_NAME_BYTES} bytes"
    if name.startswith("/"):
        return "the output name must be a relative path, not an absolute one"
    if any(unicodedata.category(character) == "Cc" for character in name):
        return "the output name holds NUL or other control characters"
    components = name.split("/")
    if len(components) > MAX_DEPTH:
        return f"the output name has more than {MAX_DEPTH} folders"
    for component in components:
        if not component:
            return "the output name has an empty component ('//', or a '/' at its end)"
        if component in (".", ".."):
            return "the output name may not hold '.' or '..' components"
        if component.startswith("."):
            return "no component of the output name may start with '.'"
        if len(component.encode()) > MAX_COMPONENT_BYTES:
            return f"a component of the output name is longer than {MAX_COMPONENT_BYTES} bytes"
    return None


def output_folder(directory: str, name: str) -> Tuple[str, str]:
    """The folder below `directory` in which the output named `name` (a relative path) goes, made as needed,
    and the name's last component. `ValueError` for a name that would leave `directory` (see
    `output_path_problem`) or a folder on the way that is a symbolic link or a file."""
    problem = output_path_problem(name)
    if problem is not None:
        raise ValueError(f"output name {name!r}: {problem}")
    *folders, last = name.split("/")
    folder = directory
    for component in folders:
        folder = os.path.join(folder, component)
        if os.path.islink(folder):
            raise ValueError(f"output name {name!r}: {folder} is a symbolic link: outputs are never written through a link")
        if os.path.lexists(folder) and not os.path.isdir(folder):
            raise ValueError(f"output name {name!r}: {folder} is a file, not a folder")
        os.makedirs(folder, exist_ok=True)
    return folder, last
