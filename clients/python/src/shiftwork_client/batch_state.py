"""What a followed batch knows, whichever client follows it."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from .models import BatchAccepted, BatchFinished, BatchResult, ItemResult, LeftOut, RetryAccepted
from .upload_queue import UploadQueue


class BatchState:
    """A batch as accepted, and its items and end as they arrive (`Batch` and `AsyncBatch` fill it)."""

    def __init__(self, accepted: BatchAccepted, uploads: Optional[UploadQueue] = None,
                 left_out: Tuple[LeftOut, ...] = (), notes: Tuple[str, ...] = ()):
        self._uploads = uploads
        self.batch_id = accepted.batch_id
        self.item_count = accepted.item_count
        self.coordinator_id = accepted.coordinator_id
        self.attached = accepted.attached
        """The submission's idempotency key attached this client to a batch the coordinator already had."""
        self.upload_spool = accepted.upload_spool
        """The coordinator keeps uploaded bytes on its disk (``--data-dir``) until their items finish."""
        self.left_out = left_out
        """The sources `submit` left out of the batch (local files that cannot be uploaded), with why."""
        self.notes = notes
        """What `submit` noticed in the directories it expanded: files that are not images, entries it could
        not read (the names are the file system's: escape them before printing them to a terminal)."""
        self.items: Dict[int, ItemResult] = {}
        """The items finished so far, by index."""
        self.finished: Optional[BatchFinished] = None
        """The batch's end, once it came."""
        self.retried = accepted.retried if isinstance(accepted, RetryAccepted) else None
        """For a retry: the items that run again (only they are streamed); None for a submission."""
        if self.retried == ():
            # Nothing to retry means every item had succeeded: the batch is over as it was.
            self.finished = BatchFinished(self.batch_id, self.item_count, 0, 0)

    @property
    def awaiting_uploads(self) -> Optional[int]:
        """How many of the batch's uploaded files the coordinator did not hold when it last asked this client
        for some (0: it holds them all); None before it asked."""
        return None if self._uploads is None else self._uploads.awaiting.get(self.batch_id)

    def _record(self, event: object) -> None:
        if isinstance(event, ItemResult):
            self.items[event.index] = event
        elif isinstance(event, BatchFinished):
            self.finished = event

    def _result(self) -> BatchResult:
        assert self.finished is not None, "the batch has not finished"
        return BatchResult(self.batch_id, tuple(self.items[index] for index in sorted(self.items)),
                           self.finished.succeeded, self.finished.failed, self.finished.cancelled)
