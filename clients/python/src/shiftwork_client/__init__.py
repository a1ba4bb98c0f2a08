"""A Python client for a Shiftwork coordinator.

`Client` (synchronous) and `AsyncClient` (asyncio) submit batches of images (URLs, or local files and
directories, whose bytes are uploaded when the coordinator asks), follow them as items finish, fetch a
batch's results again, ask for status and cancel, over one ZeroMQ DEALER socket, with CurveZMQ keys as
`shiftwork keygen` writes them. Every call returns a dataclass of `models`; every
failure is a `ShiftworkError` that says what went wrong and what to do.
"""

from .aio import AsyncBatch, AsyncClient
from .client import Batch, Client
from .errors import (AuthenticationError, KeyFileError, NoAnswerError, ProtocolVersionError, RefusedError,
                     ShiftworkError)
from .keys import CurveKeys, read_key
from .local_upload import UPLOAD_LIMIT_BYTES
from .models import (AttemptStatus, BatchAccepted, BatchEvent, BatchFinished, BatchResult, BatchStatus, CancelResult,
                     ClientStatus, ClusterStatus, Failure, ItemResult, ItemsAdded, ItemStatus, LeftOut, Output,
                     PairPosition, PairStatus, RetryAccepted, TiltShift, UploadMetadata, UploadRequest, UploadWanted, WorkerStatus)
from .printable import printable
from .redaction import redact_source, redact_urls
from .session import MAJOR, MINOR
from .submit_options import SubmitOptions

__all__ = [
    "AsyncBatch", "AsyncClient", "AttemptStatus", "AuthenticationError", "Batch", "BatchAccepted", "BatchEvent", "BatchFinished",
    "BatchResult", "BatchStatus", "CancelResult", "Client", "ClientStatus", "ClusterStatus", "CurveKeys", "Failure",
    "ItemResult",
    "ItemsAdded", "ItemStatus", "KeyFileError", "LeftOut", "MAJOR", "MINOR", "NoAnswerError", "Output", "PairPosition",
    "PairStatus",
    "ProtocolVersionError", "RefusedError", "RetryAccepted", "ShiftworkError", "SubmitOptions", "TiltShift",
    "UPLOAD_LIMIT_BYTES", "UploadMetadata", "UploadRequest", "UploadWanted", "WorkerStatus", "printable", "read_key",
    "redact_source", "redact_urls",
]
