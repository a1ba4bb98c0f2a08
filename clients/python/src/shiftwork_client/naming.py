"""Output names for a batch's items, as `shiftwork submit` chooses them."""

from __future__ import annotations

import os
import re
import unicodedata
import urllib.parse
from typing import List, Optional, Sequence, Tuple


def output_names(sources: Sequence[str]) -> List[str]:
    """Distinct, safe file stems (no extension) from the sources' last path components."""
    names: List[str] = []
    used = set()
    for source in sources:
        path = urllib.parse.unquote(urllib.parse.urlsplit(source).path) if "://" in source else source
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.splitext(os.path.basename(path.rstrip("/")))[0])
        stem = stem.lstrip(".") or "image"
        name, counter = stem, 2
        while name.lower() in used:
            name, counter = f"{stem}-{counter}", counter + 1
        used.add(name.lower())
        names.append(name)
    return names


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
