"""Output names for a batch's items, as `shiftwork submit` chooses them."""

from __future__ import annotations

import os
import re
import urllib.parse
from typing import List, Sequence


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
