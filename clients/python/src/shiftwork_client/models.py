"""Typed results of the client's calls: plain, immutable dataclasses (no protobuf types leak out)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional, Tuple, Union


@dataclass(frozen=True)
class TiltShift:
    """The filter's settings (`TiltShiftParameters` on the wire). The defaults are the coordinator's:
    focus line in the middle, no sharp band, a ramp of a quarter of the height, a blur of 10 pixels.

    `output_format` is ``"same"`` (as the input), ``"jpeg"`` or ``"png"``; `jpeg_quality` 1…100 (0: 90).
    Every field is sent as it is: 0 means 0, never "the default" (docs/protocol.md)."""

    focus: float = 0.5
    band: float = 0.0
    transition: float = 0.25
    radius: float = 10.0
    output_format: str = "same"
    jpeg_quality: int = 90


@dataclass(frozen=True)
class Output:
    """A tilt-shifted image: its encoded bytes, media type and size in pixels."""

    data: bytes = field(repr=False)
    media_type: str
    width: int
    height: int

    @property
    def extension(self) -> str:
        """The file extension of the image's actual format, from its first bytes: ``jpg`` or ``png``."""
        if self.data.startswith(b"\x89PNG\r\n\x1a\n"):
            return "png"
        if self.data.startswith(b"\xff\xd8\xff"):
            return "jpg"
        return {"image/jpeg": "jpg", "image/png": "png"}.get(self.media_type, "bin")


@dataclass(frozen=True)
class Failure:
    """Why an item failed: the `FailureCode` name (e.g. ``FAILURE_CODE_DOWNLOAD``) and its message."""

    code: str
    message: str

    @property
    def cancelled(self) -> bool:
        """Whether the item was cancelled by a request rather than failed."""
        return self.code == "FAILURE_CODE_CANCELLED"


@dataclass(frozen=True)
class BatchAccepted:
    """The coordinator took the batch (or, for `results`, re-attached this client to it)."""

    batch_id: str
    item_count: int
    coordinator_id: str


@dataclass(frozen=True)
class RetryAccepted(BatchAccepted):
    """The coordinator runs the items `retried` of a finished batch again (`retry`). Empty: nothing to
    retry (every item had succeeded). `item_count` is the whole batch's size."""

    retried: Tuple[int, ...] = ()


@dataclass(frozen=True)
class ItemsAdded:
    """A manifest item listed images: the batch grew by `sources`, indexed from `first_index` on."""

    batch_id: str
    parent_index: int
    first_index: int
    sources: Tuple[str, ...]
    output_names: Tuple[str, ...]


@dataclass(frozen=True)
class ItemResult:
    """One finished item: an `output`, or a `failure`; a manifest item succeeds with an output of media
    type ``text/uri-list`` and no data (its images follow as items of their own)."""

    batch_id: str
    index: int
    output_name: str
    source: Optional[str]
    output: Optional[Output] = None
    failure: Optional[Failure] = None

    @property
    def succeeded(self) -> bool:
        return self.output is not None

    @property
    def is_manifest(self) -> bool:
        """Whether the item was a manifest, expanded into the batch (it has no image of its own)."""
        return self.output is not None and self.output.media_type == "text/uri-list"

    def save(self, directory: str, overwrite: bool = False) -> str:
        """Writes the output image into `directory` as ``output_name.ext`` and returns its path. Without
        `overwrite`, an existing file is kept and the image takes the next free name (``x-2.jpg``), as
        ``shiftwork submit`` does. Raises `ValueError` for an item without an image."""
        if self.output is None or self.is_manifest:
            raise ValueError(f"item {self.index} of {self.batch_id} has no image to save")
        os.makedirs(directory, exist_ok=True)
        stem, extension = self.output_name or f"item-{self.index}", self.output.extension
        path, counter = os.path.join(directory, f"{stem}.{extension}"), 2
        while not overwrite and os.path.exists(path):
            path, counter = os.path.join(directory, f"{stem}-{counter}.{extension}"), counter + 1
        with open(path, "wb") as file:
            file.write(self.output.data)
        return path


@dataclass(frozen=True)
class BatchFinished:
    """The batch's last message: how its items ended."""

    batch_id: str
    succeeded: int
    failed: int
    cancelled: int


BatchEvent = Union[ItemsAdded, ItemResult, BatchFinished]
"""What a batch's stream yields, in order of arrival."""


@dataclass(frozen=True)
class BatchResult:
    """A finished batch: every item's result, by index, and the coordinator's counts."""

    batch_id: str
    items: Tuple[ItemResult, ...]
    succeeded: int
    failed: int
    cancelled: int

    @property
    def all_succeeded(self) -> bool:
        return self.failed == 0 and self.cancelled == 0


@dataclass(frozen=True)
class CancelResult:
    """The answer to a cancel: how many items were unfinished and are now cancelled."""

    batch_id: str
    cancelled_items: int


@dataclass(frozen=True)
class WorkerStatus:
    """A registered worker, as the coordinator counts it."""

    worker_id: str
    hostname: str
    slots: int
    running: int
    completed: int
    failed: int
    last_seen_ms_ago: int
    dropped_messages: int
    version: str


@dataclass(frozen=True)
class ItemStatus:
    """One item of a batch: `state` is queued, running, succeeded, failed or cancelled."""

    index: int
    source: str
    state: str
    error: str


@dataclass(frozen=True)
class BatchStatus:
    """A batch the coordinator knows; `items` only when the status was asked for this batch."""

    batch_id: str
    item_count: int
    succeeded: int
    failed: int
    cancelled: int
    items: Tuple[ItemStatus, ...]


@dataclass(frozen=True)
class ClusterStatus:
    """The answer to a status request: workers, queue, throughput and batches."""

    coordinator_id: str
    workers: Tuple[WorkerStatus, ...]
    queued_tasks: int
    running_tasks: int
    completed_tasks: int
    failed_tasks: int
    tasks_per_second: float
    dropped_messages: int
    batches: Tuple[BatchStatus, ...]
