"""Which files this client sends when the coordinator asks (`UploadRequest`), and the files asked of it and
not answered yet, in the order asked. Only files this client announced itself (or that lie under what its
caller allowed for a re-attached batch) are ever sent: a coordinator cannot make it send any other file of
this machine. No I/O here: the clients read each file (`local_upload.read`) when they send it."""

from __future__ import annotations

import collections
import os
from typing import Deque, Dict, Iterable, List, Optional, Set, Tuple

from .models import UploadRequest, UploadWanted


class UploadQueue:
    """The upload side of one client connection. Not thread-safe: one caller."""

    def __init__(self) -> None:
        self._allowed: Set[str] = set()
        self._roots: List[str] = []
        self._queue: Deque[Tuple[str, UploadWanted]] = collections.deque()
        self._queued: Set[Tuple[str, int]] = set()
        self.awaiting: Dict[str, int] = {}
        """Per batch: its items whose bytes the coordinator did not hold when it last asked (0: all in)."""
        self.spooled: Dict[str, bool] = {}
        """Per batch: whether the coordinator said it keeps received bytes on its disk."""
        self.refused = 0
        """Files asked for that this client did not announce (or was not allowed to send): never sent."""

    def allow(self, paths: Iterable[str]) -> None:
        """This client announced these files (absolute paths): it sends them when asked."""
        self._allowed.update(paths)

    def allow_under(self, paths: Iterable[str]) -> None:
        """Files at or below these paths (made absolute) may be sent when asked: for a batch this client attaches
        to (`results`, `retry`) whose files another client, or an earlier run, announced."""
        self._roots += [os.path.abspath(path) for path in paths]

    def permitted(self, path: str) -> bool:
        """Whether `path` is a file this client sends: announced by it, or under a root allowed, and written
        plainly (absolute, no ``..`` or ``.`` components, nothing a normalisation would change)."""
        if not os.path.isabs(path) or os.path.normpath(path) != path:
            return False
        return path in self._allowed or any(path == root or path.startswith(root.rstrip(os.sep) + os.sep)
                                            for root in self._roots)

    def asked(self, request: UploadRequest) -> None:
        """Queues the files `request` asks for that this client sends (each once while queued)."""
        self.awaiting[request.batch_id] = request.awaiting_items
        self.spooled[request.batch_id] = request.spooled
        for wanted in request.items:
            key = (request.batch_id, wanted.item_index)
            if not self.permitted(wanted.path):
                self.refused += 1
            elif key not in self._queued:
                self._queued.add(key)
                self._queue.append((request.batch_id, wanted))

    @property
    def pending(self) -> bool:
        """Whether a file asked for waits to be sent."""
        return bool(self._queue)

    def next(self) -> Optional[Tuple[str, UploadWanted]]:
        """The next file to send, as (batch ID, what was asked), or None."""
        if not self._queue:
            return None
        batch_id, wanted = self._queue.popleft()
        self._queued.discard((batch_id, wanted.item_index))
        return batch_id, wanted
