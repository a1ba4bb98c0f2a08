"""A local file as an upload (docs/protocol.md, "Uploads"): what is announced for it when the batch is
submitted (`UploadMetadata`: its size and modification time), and its bytes when the coordinator asks,
checked against what was announced. Blocking file I/O: the asyncio client calls it on an executor thread."""

from __future__ import annotations

import os
import stat
from typing import Optional

import google_crc32c

from .models import UploadMetadata, UploadWanted

UPLOAD_LIMIT_BYTES = 100 * 1024 * 1024
"""The largest file a worker accepts (its image limit, ``ClusterDefaults.uploadFileBytes``): a larger one is
refused before anything is sent, and a coordinator's request for more is answered with a failure."""


class UploadRefused(ValueError):
    """A local file that cannot be uploaded: gone, not a regular file, empty, or over the upload limit. Its
    message names the file and why."""


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of `data`, as the coordinator and the workers check it."""
    return google_crc32c.value(data)


def metadata(path: str) -> UploadMetadata:
    """What ``stat`` says of the regular file `path` now; `UploadRefused` for anything else."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise UploadRefused(f"{path}: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UploadRefused(f"{path} is not a regular file")
    return UploadMetadata(info.st_size, info.st_mtime_ns)


def announce(path: str, limit: int = UPLOAD_LIMIT_BYTES) -> UploadMetadata:
    """What `path` is announced as; `UploadRefused` when the workers could not take it (empty, or over the
    upload limit: the message says what to do)."""
    found = metadata(path)
    if found.size == 0:
        raise UploadRefused(f"{path} is empty: there is no image to send")
    if found.size > limit:
        raise UploadRefused(f"{path} is {_mebibytes(found.size)} MiB, more than the {_mebibytes(limit)} MiB a worker "
                            f"accepts (the upload limit): leave it out, or make it smaller")
    return found


class Answer:
    """The answer to one file the coordinator asked for: its `data` and `crc32c`, or a `failure` naming it."""

    __slots__ = ("item_index", "data", "crc32c", "failure")

    def __init__(self, item_index: int, data: bytes = b"", checksum: int = 0, failure: str = ""):
        self.item_index = item_index
        self.data = data
        self.crc32c = checksum
        self.failure = failure


def read(wanted: UploadWanted, limit: int = UPLOAD_LIMIT_BYTES) -> Answer:
    """Reads the file `wanted` names, if it is still what was announced (its size and modification time,
    before and after reading); otherwise a failure that names the file and what changed. Reads at most one
    byte more than announced, so a file that grew is noticed without reading it whole."""
    path, expected = wanted.path, wanted.expected

    def failure(text: str) -> Answer:
        return Answer(wanted.item_index, failure=text)

    if expected.size == 0 or expected.size > limit:
        return failure(f"{path}: the coordinator asked for {expected.size} bytes, outside 1...{limit} (the upload "
                       f"limit): not sent")
    try:
        before = metadata(path)
    except UploadRefused as error:
        return failure(f"{path} vanished since it was submitted ({error})")
    change = _difference(expected, before)
    if change is not None:
        return failure(f"{path} changed since it was submitted ({change})")
    try:
        with open(path, "rb") as file:
            data = file.read(expected.size + 1)
            info = os.fstat(file.fileno())
    except OSError as error:
        return failure(f"{path} could not be read: {error.strerror or error}")
    after = UploadMetadata(info.st_size, info.st_mtime_ns)
    if len(data) != expected.size or _difference(expected, after) is not None:
        return failure(f"{path} changed while it was read: submit it again")
    return Answer(wanted.item_index, data, crc32c(data))


def _difference(announced: UploadMetadata, now: UploadMetadata) -> Optional[str]:
    if announced.size != now.size:
        return f"size {announced.size} then, {now.size} now"
    if announced.modified_unix_ns != now.modified_unix_ns:
        return "modified since"
    return None


def _mebibytes(size: int) -> str:
    value = size / 1_048_576
    return f"{round(value)}" if value >= 10 or value == round(value) else f"{value:.1f}"
