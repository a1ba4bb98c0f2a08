"""What a followed batch knows, whichever client follows it."""

from __future__ import annotations

from typing import Dict, Optional

from .models import BatchAccepted, BatchFinished, BatchResult, ItemResult, RetryAccepted


class BatchState:
    """A batch as accepted, and its items and end as they arrive (`Batch` and `AsyncBatch` fill it)."""

    def __init__(self, accepted: BatchAccepted):
        self.batch_id = accepted.batch_id
        self.item_count = accepted.item_count
        self.coordinator_id = accepted.coordinator_id
        self.attached = accepted.attached
        """The submission's idempotency key attached this client to a batch the coordinator already had."""
        self.items: Dict[int, ItemResult] = {}
        """The items finished so far, by index."""
        self.finished: Optional[BatchFinished] = None
        """The batch's end, once it came."""
        self.retried = accepted.retried if isinstance(accepted, RetryAccepted) else None
        """For a retry: the items that run again (only they are streamed); None for a submission."""
        if self.retried == ():
            # Nothing to retry means every item had succeeded: the batch is over as it was.
            self.finished = BatchFinished(self.batch_id, self.item_count, 0, 0)

    def _record(self, event: object) -> None:
        if isinstance(event, ItemResult):
            self.items[event.index] = event
        elif isinstance(event, BatchFinished):
            self.finished = event

    def _result(self) -> BatchResult:
        assert self.finished is not None, "the batch has not finished"
        return BatchResult(self.batch_id, tuple(self.items[index] for index in sorted(self.items)),
                           self.finished.succeeded, self.finished.failed, self.finished.cancelled)
