"""Typed results of the client's calls: plain, immutable dataclasses (no protobuf types leak out)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional, Tuple, Union

from .naming import output_folder


@dataclass(frozen=True)
class TiltShift:
    """The filter's settings (`TiltShiftParameters` on the wire). The defaults are the coordinator's:
    focus line in the middle, no sharp band, a ramp of a quarter of the height, a blur of 10 pixels.

    Ranges, as for ``shiftwork submit``: `focus`, `band`, `transition` 0…1; `radius` 0 (no blur) or 0.5…500.
    `output_format` is ``"same"`` (as the input; JPEG for HEIC, GIF and BMP inputs), ``"jpeg"``, ``"png"``,
    ``"webp"``, ``"avif"`` or ``"tiff"``.
    `quality` (1…100) is that of whichever lossy format is written (defaults: JPEG 90, WebP 80, AVIF 60; PNG
    takes none), like ``--quality``; `jpeg_quality` (1…100) sets JPEG's alone (give one of the two).
    `colour`: ``"keep"`` (the pixels and their ICC profile as they are) or ``"srgb"`` (profiled RGB converted
    to sRGB). `metadata`: ``"keep"`` (ICC profile, EXIF with orientation reset, XMP, IPTC) or ``"strip"``
    (the ICC profile only). `angle`: the focus line's angle in degrees, counter-clockwise, -360…360 (0
    horizontal, 90 vertical; `focus`, `band` and `transition` are then fractions of the image's extent across
    the line), like ``--angle``. `falloff`: ``"blend"`` (one blur blended in, Core Image's recipe) or
    ``"progressive"`` (the blur itself grows away from the sharp band, like a lens's depth of field), like
    ``--falloff``. `submit` raises `ValueError` for a value out of range."""

    focus: float = 0.5
    band: float = 0.0
    transition: float = 0.25
    radius: float = 10.0
    output_format: str = "same"
    jpeg_quality: int = 90
    quality: Optional[int] = None
    colour: str = "keep"
    metadata: str = "keep"
    angle: float = 0.0
    falloff: str = "blend"


@dataclass(frozen=True)
class Output:
    """A tilt-shifted image: its encoded bytes, media type and size in pixels. For a batch with a sink,
    `data` is empty and `location` says where the worker wrote the image (a path or an ``s3://`` URL),
    with its `size` in bytes and `crc32c` (CRC-32C of those bytes). `warnings`: what the worker noticed
    although it succeeded (an ignored colour profile…). `held_on_worker`: the image stayed on the worker that
    made it (a download kept for its tilt-shift; never so in what a coordinator sends a client)."""

    data: bytes = field(repr=False)
    media_type: str
    width: int
    height: int
    location: str = ""
    size: int = 0
    crc32c: int = 0
    warnings: Tuple[str, ...] = ()
    held_on_worker: bool = False

    @property
    def in_sink(self) -> bool:
        """Whether a worker wrote the image into the batch's sink (at `location`) instead of sending it."""
        return bool(self.location)

    @property
    def extension(self) -> str:
        """The file extension of the image's actual format, from its first bytes: ``jpg``, ``png``, ``webp``,
        ``avif`` or ``tif``."""
        if self.data.startswith(b"\x89PNG\r\n\x1a\n"):
            return "png"
        if self.data.startswith(b"\xff\xd8\xff"):
            return "jpg"
        if self.data[:4] == b"RIFF" and self.data[8:12] == b"WEBP":
            return "webp"
        if self.data[4:12] in (b"ftypavif", b"ftypavis"):
            return "avif"
        if self.data[:4] in (b"II*\x00", b"MM\x00*"):
            return "tif"
        return {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "image/avif": "avif",
                "image/tiff": "tif"}.get(self.media_type, "bin")


@dataclass(frozen=True)
class Failure:
    """Why an item failed: the `FailureCode` name (e.g. ``FAILURE_CODE_DOWNLOAD``) and its message.
    `transient`: a cause another attempt may cure (the coordinator retried it as often as the batch allowed);
    `retry_after_ms`: the wait the origin asked for (HTTP Retry-After), 0 when none."""

    code: str
    message: str
    transient: bool = False
    retry_after_ms: int = 0

    @property
    def cancelled(self) -> bool:
        """Whether the item was cancelled by a request rather than failed."""
        return self.code == "FAILURE_CODE_CANCELLED"


@dataclass(frozen=True)
class BatchAccepted:
    """The coordinator took the batch (or, for `results`, re-attached this client to it). `attached`: the
    submission's idempotency key named a batch the coordinator had, and this client was attached to it
    (its finished items come first) instead of a new batch being made."""

    batch_id: str
    item_count: int
    coordinator_id: str
    attached: bool = False
    upload_spool: bool = False
    """The coordinator keeps uploaded bytes on its disk (``--data-dir``) until their items finish: once it holds
    them all, this client may leave (uploads of a coordinator without it are asked again after a restart)."""


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
        """Writes the output image into `directory` as ``output_name.ext`` and returns its path. An output
        name is a relative path (``2024/01/IMG_0001``: a directory submitted with ``shiftwork submit`` keeps its
        folders), whose folders are made below `directory`; a name that would leave it (``..``, an absolute
        path, NUL, a hidden component, a folder that is a symbolic link) raises `ValueError`, nothing is
        written. Without `overwrite`, an existing file is kept and the image takes the next free name
        (``x-2.jpg``), as ``shiftwork submit`` does. Raises `ValueError` for an item without an image."""
        if self.output is None or self.is_manifest:
            raise ValueError(f"item {self.index} of {self.batch_id} has no image to save")
        if self.output.in_sink:
            raise ValueError(f"item {self.index} of {self.batch_id} was written by a worker to {self.output.location} "
                             f"(the batch's sink): read it there")
        os.makedirs(directory, exist_ok=True)
        name, extension = self.output_name or f"item-{self.index}", self.output.extension
        folder, stem = output_folder(directory, name)
        path, counter = os.path.join(folder, f"{stem}.{extension}"), 2
        while not overwrite and os.path.lexists(path):
            path, counter = os.path.join(folder, f"{stem}-{counter}.{extension}"), counter + 1
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
class AttemptStatus:
    """One failed attempt at one of an item's tasks: `task` is download, tilt-shift or noop, `attempt` its
    number (1, 2, 3…), `code` the `FailureCode` name, `error` the message; `transient`: a cause another
    attempt may cure, `retried`: another attempt followed after `retry_delay_ms`; `worker`: where it ran;
    `failed_unix_ms`: when it failed, in milliseconds since 1970 (0: not said)."""

    task: str
    attempt: int
    code: str
    error: str
    transient: bool = False
    retried: bool = False
    retry_delay_ms: int = 0
    worker: str = ""
    failed_unix_ms: int = 0


@dataclass(frozen=True)
class ItemStatus:
    """One item of a batch: `state` is queued, running, succeeded, failed or cancelled. `warnings`: a
    succeeded item's output warnings; `location`: where its output was written (a batch with a sink);
    `attempts`: attempts made (1 + retries, 0 before any started); `failed_attempts`: each failed one,
    oldest first."""

    index: int
    source: str
    state: str
    error: str
    warnings: Tuple[str, ...] = ()
    location: str = ""
    attempts: int = 0
    failed_attempts: Tuple[AttemptStatus, ...] = ()


@dataclass(frozen=True)
class BatchStatus:
    """A batch the coordinator knows; `items` only when the status was asked for this batch. `priority`: its
    share against other batches, -10…10 (0 normal); `idempotency_key`: the key it was submitted with, if any."""

    batch_id: str
    item_count: int
    succeeded: int
    failed: int
    cancelled: int
    items: Tuple[ItemStatus, ...]
    priority: int = 0
    idempotency_key: str = ""


@dataclass(frozen=True)
class ClientStatus:
    """What one client holds on the coordinator against its per-client limits: `client` is ``key Z85`` (its
    CurveZMQ key) or ``peer IDENTITY`` (its connection, without CurveZMQ)."""

    client: str
    queued_items: int
    batches: int


@dataclass(frozen=True)
class PairPosition:
    """How far a coordinator's journal goes: `term` (of the last takeover; 0: none) and `records` written."""

    term: int
    records: int


@dataclass(frozen=True)
class PairStatus:
    """A coordinator of a primary/backup pair (``--ha``): `role` as started (``PAIR_ROLE_PRIMARY`` or
    ``PAIR_ROLE_BACKUP``), its `state` and its peer's as last heard (``PAIR_STATE_ACTIVE``, ``PAIR_STATE_PASSIVE``,
    ``PAIR_STATE_STARTING_*``; ``PAIR_STATE_UNSPECIFIED``: not heard), its journal's `position`; on the active
    one, how far the passive one is behind (`lag_records`, for `lag_ms`) and the acknowledgements waiting for it
    (`held_messages`); `peer`: where the other coordinator serves; `history`: what its journal says it last was."""

    role: str
    state: str
    peer_state: str
    position: PairPosition
    lag_records: int = 0
    lag_ms: int = 0
    held_messages: int = 0
    peer: str = ""
    history: str = ""


@dataclass(frozen=True)
class ClusterStatus:
    """The answer to a status request: workers, queue, throughput and batches; and what each client holds
    (`clients`, as far as the asker may see) against the per-client limits (0: not said); `pair`: the
    coordinator's place in a primary/backup pair (``None``: it runs alone)."""

    coordinator_id: str
    workers: Tuple[WorkerStatus, ...]
    queued_tasks: int
    running_tasks: int
    completed_tasks: int
    failed_tasks: int
    tasks_per_second: float
    dropped_messages: int
    batches: Tuple[BatchStatus, ...]
    clients: Tuple[ClientStatus, ...] = ()
    max_queued_items_per_client: int = 0
    max_batches_per_client: int = 0
    pair: Optional[PairStatus] = None


@dataclass(frozen=True)
class UploadMetadata:
    """What a local file was when its batch was submitted (``BatchItem.upload``): its `size` in bytes and its
    modification time in nanoseconds since 1970. A file that differs when the coordinator asks for it is not
    sent: its item fails (``FAILURE_CODE_UPLOAD``) naming it."""

    size: int
    modified_unix_ns: int


@dataclass(frozen=True)
class UploadWanted:
    """One file the coordinator asks for: the item, the file's path on this machine, and what it must still be."""

    item_index: int
    path: str
    expected: UploadMetadata


@dataclass(frozen=True)
class UploadRequest:
    """The coordinator asks for these files of batch `batch_id` (``UploadRequest``): `items`, `credit_bytes`
    in all (within its ``--upload-window-mb``); `awaiting_items`: the batch's items whose bytes it does not
    hold yet, these included; `spooled`: it keeps what it received on its disk."""

    batch_id: str
    items: Tuple[UploadWanted, ...]
    credit_bytes: int
    awaiting_items: int
    spooled: bool


@dataclass(frozen=True)
class LeftOut:
    """A source `submit` left out of the batch, and why: a local file that cannot be uploaded (gone,
    unreadable, empty, over the 100 MiB upload limit). The other sources go on."""

    source: str
    reason: str
