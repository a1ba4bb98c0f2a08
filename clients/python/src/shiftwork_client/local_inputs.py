"""A submission's sources made ready to send, as ``shiftwork submit`` makes them: a local directory becomes
the images inside it (recursive, sorted, by signature) with their paths inside it, a local list of images
(``.txt``, ``.list``) its entries when local files are uploaded (`local_manifest`; on a shared disk a worker
reads the list and the batch grows by it while it runs), every source gets its
output name (the tree layout, or flat), and a local file becomes an upload (its bytes sent when the
coordinator asks) unless the workers share this machine's disk. Blocking (it reads the file system): the
asyncio client calls it on an executor thread."""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from . import local_manifest, local_upload
from .image_directory import READABLE_FORMATS, ImageDirectory
from .models import ClusterStatus, LeftOut, UploadMetadata
from .naming import output_names


@dataclass(frozen=True)
class PreparedInputs:
    """What a `SubmitBatch` carries for each item, in order: `sources` (a local file's absolute path),
    `output_names`, and `uploads` (a local file's `UploadMetadata`, None for a URL or a shared-disk path);
    beside them the sources `left_out` (with why) and `notes` about the directories (files that are not
    images, entries that could not be read)."""

    sources: Tuple[str, ...]
    output_names: Tuple[str, ...]
    uploads: Tuple[Optional[UploadMetadata], ...]
    left_out: Tuple[LeftOut, ...] = ()
    notes: Tuple[str, ...] = ()

    @property
    def upload_paths(self) -> Tuple[str, ...]:
        """The local files this submission uploads (the only files this client sends when asked)."""
        return tuple(source for source, upload in zip(self.sources, self.uploads) if upload is not None)


def absolute_sources(status: ClusterStatus, batch_id: str) -> List[str]:
    """The sources of batch `batch_id` in `status` that are absolute paths: the local files it was submitted
    with, which a client attaching on the same machine (`results`, `retry`) may be asked for."""
    return [item.source for batch in status.batches if batch.batch_id == batch_id for item in batch.items
            if item.source.startswith("/")]


def local_path(source: str) -> Optional[str]:
    """The absolute path `source` names on this machine (a path, relative to the working directory or not,
    or a ``file://`` URL), or None for a URL of another scheme."""
    if "://" in source:
        parts = urllib.parse.urlsplit(source)
        if parts.scheme.lower() != "file":
            return None
        return os.path.normpath(urllib.parse.unquote(parts.path)) if parts.path else None
    return os.path.abspath(source)


def prepare(sources: Sequence[str], upload: bool = True, flat: bool = False,
            limit: int = local_upload.UPLOAD_LIMIT_BYTES) -> PreparedInputs:
    """Expands and names `sources` (URLs, paths, ``file://`` URLs, directories), in order.

    With `upload` (the default), each local file is announced as an upload: one that cannot be (gone,
    unreadable, empty, over `limit`) is left out, with why, and the rest goes on. Without it (workers that
    read a disk shared with this client, started with ``--allow-local-files``) a local file is sent as its
    absolute path. `ValueError`, saying what to give, for no sources, a directory that cannot be read, or
    nothing left to send."""
    if isinstance(sources, (str, bytes)):
        raise ValueError(f"sources must be a list of URLs, paths or directories, not one string: give [{sources!r}]")
    sources = list(sources)
    if not sources:
        raise ValueError("no sources: give image URLs (http, https, file), paths or directories")
    expanded: List[Tuple[str, Optional[str], Optional[str]]] = []  # (source, path inside a directory, local path)
    notes: List[str] = []
    empty: List[str] = []
    for source in sources:
        if not isinstance(source, str):
            raise ValueError(f"a source must be a string (a URL, a path or a directory), not {source!r}")
        path = local_path(source)
        if upload and local_manifest.is_local_list(path):
            entries, below = local_manifest.read(path)
            expanded += [(entry, inside, local_path(entry)) for entry, inside in zip(entries, below)]
            continue
        if path is None or not os.path.isdir(path):
            expanded.append((source, None, path))
            continue
        try:
            directory = ImageDirectory.walk(path)
        except OSError as error:
            raise ValueError(f"{path}: {error.strerror or error}: give a directory you can read, or the images "
                             f"themselves") from None
        expanded += [(image, inside, image) for image, inside in zip(directory.images, directory.paths_inside)]
        notes += [line for line in (directory.skipped_summary(), directory.unreadable_summary()) if line]
        if not directory.images:
            empty.append(path)
    kept: List[Tuple[str, Optional[str], Optional[UploadMetadata]]] = []
    left_out: List[LeftOut] = []
    for source, inside, path in expanded:
        if path is None:
            kept.append((source, inside, None))
        elif upload:
            try:
                kept.append((path, inside, local_upload.announce(path, limit)))
            except local_upload.UploadRefused as refused:
                left_out.append(LeftOut(source, str(refused)))
        else:
            kept.append((path, inside, None))
    if empty:
        named = ", ".join(f"'{path}'" for path in empty)
        notes.append(f"{named} {'holds' if len(empty) == 1 else 'hold'} no image file ({READABLE_FORMATS})")
    if not kept:
        reasons = "; ".join([item.reason for item in left_out] + notes)
        raise ValueError(f"no images to send ({reasons}): give image files, directories with images, or URLs")
    names = output_names([source for source, _, _ in kept], [inside for _, inside, _ in kept], flat=flat)
    return PreparedInputs(tuple(source for source, _, _ in kept), tuple(names), tuple(meta for _, _, meta in kept),
                          tuple(left_out), tuple(notes))
