"""The client's side of the wire protocol, without sockets: it builds the requests, reads what the
coordinator sends, and says whom each message is for. `Client` and `AsyncClient` only move its bytes.

Rules kept here (docs/protocol.md): every message is one `Envelope` with ``major = 1`` and this client's
minor version, read from the last frame; every request carries a fresh ``request_id`` that its answer or
refusal echoes; submissions say ``accepts_batches``, so finished items may come grouped in an
``ItemFinishedBatch`` (each element names its batch); an item is delivered once even when the coordinator
sends it twice (a re-attached stream); a refusal with an empty ``request_id`` fails every pending request
and stream; an envelope of another major version, or a refusal with ``REFUSAL_CODE_UNSUPPORTED_VERSION``,
is a `ProtocolVersionError` naming both versions. A message that cannot be decoded is dropped and
counted; a body this version does not know (a newer minor's) is dropped. Uploads: a submission's local files
are announced (`BatchItem.upload`); an `UploadRequest` is delivered as `UploadsAsked` for the client to answer
file by file with `upload_data` (docs/protocol.md, "Uploads").
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

from google.protobuf.message import DecodeError

from ._proto.shiftwork.v1 import shiftwork_pb2 as pb
from .errors import ProtocolVersionError, RefusedError, ShiftworkError
from .local_inputs import PreparedInputs
from .models import (AttemptStatus, BatchAccepted, BatchEvent, BatchFinished, BatchStatus, CancelResult, ClientStatus,
                     ClusterStatus, Failure, ItemResult, ItemsAdded, ItemStatus, Output, PairPosition, PairStatus,
                     RetryAccepted, TiltShift,
                     UploadMetadata, UploadRequest, UploadWanted, WorkerStatus)
from .naming import output_names

# The most items of one batch this client sizes its tables by, whatever a coordinator announces (the protocol's
# ceiling of --max-batch-items, docs/protocol.md "Bounds").
MAX_ITEMS_PER_BATCH = 10_000_000
from .submit_options import SubmitOptions, wire_parameters

REFUSAL_CODE_PASSIVE = 8
"""`RefusalCode.passive`: the coordinator is the passive one of a pair (docs/failover.md); the request goes to
the next coordinator of the list."""

MAJOR = 1
"""The wire protocol's major version this client speaks."""
MINOR = 3
"""The minor version it sends: request IDs on cancels, `CancelAccepted`, refusal codes (minor 2); sinks and
outputs given by location (minor 3)."""


@dataclass(frozen=True)
class Answer:
    """The answer to request `request_id`: a typed `value`, or the `error` it failed with."""

    request_id: str
    value: object = None
    error: Optional[ShiftworkError] = None


@dataclass(frozen=True)
class Event:
    """A message of the stream of batch `batch_id`."""

    batch_id: str
    event: BatchEvent


@dataclass(frozen=True)
class FailAll:
    """Every pending request and stream fails with `error` (a refusal without request ID, or a
    coordinator of another major version)."""

    error: ShiftworkError


@dataclass(frozen=True)
class UploadsAsked:
    """The coordinator asks this client for files of one of its batches (an `UploadRequest`)."""

    request: UploadRequest


Delivery = Union[Answer, Event, FailAll, UploadsAsked]


@dataclass
class _Stream:
    """What the session knows of a batch it streams: its sources by index and the items delivered."""

    sources: List[Optional[str]]
    delivered: Set[int] = field(default_factory=set)


class Session:
    """The protocol state of one client connection (one DEALER socket). Not thread-safe: one caller.

    `protocol_major` is for tests of version mismatches only; a client always speaks `MAJOR`."""

    def __init__(self, protocol_major: int = MAJOR):
        self.major = protocol_major
        # request_id -> (kind, sources of a submission)
        self._pending: Dict[str, Tuple[str, Optional[List[str]]]] = {}
        self._streams: Dict[str, _Stream] = {}
        self.dropped_messages = 0
        """Messages from the coordinator that could not be decoded."""
        self.witnessed: Tuple[int, int] = (0, 0)
        """The furthest journal position (term, records) an active coordinator of a pair sent this client
        (`Envelope.witnessed`); every request says it back, so that a coordinator behind it does not take over
        on its word (docs/failover.md, "The witnessed position"). It only grows: a later term beats more
        records."""

    # ------------------------------------------------------------------------------------------------ requests

    def submit(self, sources: Union[Sequence[str], PreparedInputs], parameters: TiltShift, noop: bool = False,
               options: SubmitOptions = SubmitOptions()) -> Tuple[str, bytes]:
        """A `SubmitBatch` with `parameters` and `options` of `sources`: inputs prepared by
        `local_inputs.prepare` (expanded, named, local files announced as uploads), or a list of URLs or paths
        the workers can read, sent as they are and named as `shiftwork submit` names them. Returns its
        request ID and bytes. `ValueError`, saying what to give, for a value out of range."""
        if isinstance(sources, PreparedInputs):
            prepared = sources
        else:
            if isinstance(sources, (str, bytes)):
                raise ValueError(f"sources must be a list of URLs or paths, not one string: give [{sources!r}]")
            listed = list(sources)
            if not listed:
                raise ValueError("no sources: give image URLs (http, https, file) or paths the workers can read")
            prepared = PreparedInputs(tuple(listed), tuple(output_names(listed)), (None,) * len(listed))
        checked = options.checked()
        items = [pb.BatchItem(source=source, output_name=name) for source, name in
                 zip(prepared.sources, prepared.output_names)]
        for item, upload in zip(items, prepared.uploads):
            if upload is not None:
                item.upload.size = upload.size
                item.upload.modified_unix_ns = upload.modified_unix_ns
        sources = list(prepared.sources)
        body = pb.SubmitBatch(items=items, parameters=wire_parameters(parameters), accepts_batches=True,
                              kind=pb.TASK_KIND_NOOP if noop else pb.TASK_KIND_UNSPECIFIED)
        checked.fill(body)
        request_id = self._new_request("submit", sources)
        body.request_id = request_id
        return request_id, self._envelope(submit_batch=body)

    def status(self, batch_id: str = "") -> Tuple[str, bytes]:
        """A `StatusRequest`: the whole cluster, or one batch's items."""
        request_id = self._new_request("status")
        return request_id, self._envelope(status_request=pb.StatusRequest(request_id=request_id, batch_id=batch_id))

    def cancel(self, batch_id: str, items: Optional[Sequence[int]] = None) -> Tuple[str, bytes]:
        """A `CancelBatch` of some items of a batch, or of all of them."""
        request_id = self._new_request("cancel")
        body = pb.CancelBatch(request_id=request_id, batch_id=batch_id, item_indexes=list(items or []))
        return request_id, self._envelope(cancel_batch=body)

    def fetch(self, batch_id: str) -> Tuple[str, bytes]:
        """A `FetchResults`: attach to a batch and receive its items (again)."""
        request_id = self._new_request("fetch")
        return request_id, self._envelope(fetch_results=pb.FetchResults(request_id=request_id, batch_id=batch_id))

    def retry(self, batch_id: str, items: Optional[Sequence[Union[str, int]]] = None) -> Tuple[str, bytes]:
        """A `RetryBatch`: run a finished batch's failed and cancelled items again, or only `items` (each
        an output name, a source or an index)."""
        request_id = self._new_request("retry")
        body = pb.RetryBatch(request_id=request_id, batch_id=batch_id, items=[str(item) for item in items or []],
                             accepts_batches=True)
        return request_id, self._envelope(retry_batch=body)

    def upload_data(self, batch_id: str, item_index: int, data: bytes = b"", crc32c: int = 0,
                    failure: str = "") -> bytes:
        """An `UploadData`: the bytes of the file asked for as item `item_index` of `batch_id` and their
        CRC-32C, or (`failure`) why it is not sent."""
        body = pb.UploadData(batch_id=batch_id, item_index=item_index, data=data, crc32c=crc32c, failure=failure)
        return self._envelope(upload_data=body)

    def forget(self, request_id: str) -> None:
        """Stops waiting for `request_id` (it timed out): a late answer is dropped."""
        self._pending.pop(request_id, None)

    def close_stream(self, batch_id: str) -> None:
        """Stops following `batch_id`: later messages of that batch are dropped."""
        self._streams.pop(batch_id, None)

    def _new_request(self, kind: str, sources: Optional[List[str]] = None) -> str:
        request_id = str(uuid.uuid4())
        self._pending[request_id] = (kind, sources)
        return request_id

    def _envelope(self, **body) -> bytes:
        envelope = pb.Envelope(major=self.major, minor=MINOR, **body)
        if self.witnessed != (0, 0):
            envelope.witnessed.term, envelope.witnessed.records = self.witnessed
        return envelope.SerializeToString()

    def rewitnessed(self, data: bytes) -> bytes:
        """`data` (a request this session built) with the witnessed position as it is now: a request sent
        again to the next coordinator after a turn carries what was witnessed since it was first sent."""
        if self.witnessed == (0, 0):
            return data
        envelope = pb.Envelope.FromString(data)
        envelope.witnessed.term, envelope.witnessed.records = self.witnessed
        return envelope.SerializeToString()

    def witness(self, term: int, records: int) -> None:
        """Keeps (`term`, `records`) when it is further than what was witnessed so far."""
        if (term, records) > self.witnessed:
            self.witnessed = (term, records)

    # ------------------------------------------------------------------------------------------------ receiving

    def receive(self, frames: Sequence[bytes]) -> List[Delivery]:
        """Reads one message (its frames; the envelope is the last) and returns what it delivers."""
        try:
            envelope = pb.Envelope.FromString(frames[-1])
        except (DecodeError, IndexError, ValueError):
            self.dropped_messages += 1
            return []
        if envelope.HasField("witnessed"):
            self.witness(envelope.witnessed.term, envelope.witnessed.records)
        if envelope.major != self.major:
            detail = envelope.refusal.reason if envelope.WhichOneof("body") == "refusal" else ""
            return [FailAll(ProtocolVersionError(envelope.major, self.major, detail))]
        kind = envelope.WhichOneof("body")
        if kind is None:
            return []  # a body of a newer minor version: not for this client
        message = getattr(envelope, kind)
        problem = _out_of_bounds(kind, message)
        if problem is not None:
            # A count no coordinator sends, which this client would size its tables by: the request it answers
            # fails with why; anything else is dropped and counted.
            self.dropped_messages += 1
            request_id = getattr(message, "request_id", "")
            if request_id and self._pending.pop(request_id, None) is not None:
                return [Answer(request_id, error=RefusedError(
                    "REFUSAL_CODE_LIMIT", f"the coordinator's answer was refused: {problem}", request_id))]
            return []
        handler = getattr(self, f"_on_{kind}", None)
        return handler(message) if handler else []

    def _on_refusal(self, refusal) -> List[Delivery]:
        if refusal.code == pb.REFUSAL_CODE_UNSUPPORTED_VERSION:
            # "unsupported wire protocol major version 2 (this peer speaks 1)": the coordinator's is the last number.
            speaks = re.search(r"speaks (\d+)", refusal.reason)
            error: ShiftworkError = ProtocolVersionError(int(speaks.group(1)) if speaks else None, self.major, refusal.reason)
        else:
            error = _refused_error(refusal)
        if not refusal.request_id:
            return [FailAll(error)]
        if refusal.code == REFUSAL_CODE_PASSIVE and refusal.request_id in self._pending:
            # Still pending: the client sends it again to the next coordinator, whose answer it awaits.
            return [Answer(refusal.request_id, error=error)]
        if self._pending.pop(refusal.request_id, None) is None:
            return []
        return [Answer(refusal.request_id, error=error)]

    def _on_batch_accepted(self, accepted) -> List[Delivery]:
        pending = self._pending.pop(accepted.request_id, None)
        if pending is None:
            return []
        _, sources = pending
        stream = self._streams.get(accepted.batch_id)
        if stream is None or sources is not None:
            stream = _Stream(sources=list(sources) if sources else [])
            self._streams[accepted.batch_id] = stream
        return [Answer(accepted.request_id, _batch_accepted(accepted))]

    def _on_retry_accepted(self, accepted) -> List[Delivery]:
        if self._pending.pop(accepted.request_id, None) is None:
            return []
        retried = tuple(accepted.item_indexes)
        if retried:
            # Only the retried items are streamed: the others count as delivered already.
            kept = set(range(accepted.item_count)) - set(retried)
            self._streams[accepted.batch_id] = _Stream(sources=[], delivered=kept)
        return [Answer(accepted.request_id, _retry_accepted(accepted))]

    def _on_status_reply(self, reply) -> List[Delivery]:
        if self._pending.pop(reply.request_id, None) is None:
            return []
        return [Answer(reply.request_id, _cluster_status(reply))]

    def _on_cancel_accepted(self, accepted) -> List[Delivery]:
        if self._pending.pop(accepted.request_id, None) is None:
            return []
        return [Answer(accepted.request_id, _cancel_result(accepted))]

    def _on_items_added(self, added) -> List[Delivery]:
        stream = self._streams.get(added.batch_id)
        if stream is None:
            return []
        end = added.first_index + len(added.items)
        stream.sources.extend([None] * (end - len(stream.sources)))
        for offset, item in enumerate(added.items):
            stream.sources[added.first_index + offset] = item.source
        return [Event(added.batch_id, _items_added(added))]

    def _on_item_finished(self, finished) -> List[Delivery]:
        stream = self._streams.get(finished.batch_id)
        if stream is None or finished.item_index in stream.delivered:
            return []
        stream.delivered.add(finished.item_index)
        source = stream.sources[finished.item_index] if finished.item_index < len(stream.sources) else None
        return [Event(finished.batch_id, _item_result(finished, source))]

    def _on_items_finished(self, batch) -> List[Delivery]:
        deliveries: List[Delivery] = []
        for finished in batch.items:
            deliveries += self._on_item_finished(finished)
        return deliveries

    def _on_upload_request(self, request) -> List[Delivery]:
        return [UploadsAsked(_upload_request(request))]

    def _on_batch_finished(self, finished) -> List[Delivery]:
        if self._streams.pop(finished.batch_id, None) is None:
            return []
        return [Event(finished.batch_id, _batch_finished(finished))]


def _out_of_bounds(kind: str, message) -> Optional[str]:
    """Why a coordinator's message is out of the bounds this client checks (docs/protocol.md, "Bounds"): the
    item counts it sizes its tables by; `None` when it is within them."""
    if kind in ("batch_accepted", "retry_accepted") and message.item_count > MAX_ITEMS_PER_BATCH:
        name = "BatchAccepted" if kind == "batch_accepted" else "RetryAccepted"
        return f"{name}.item_count is {message.item_count}, more than the limit of {MAX_ITEMS_PER_BATCH}"
    if kind == "retry_accepted" and len(message.item_indexes) > message.item_count:
        return (f"RetryAccepted.item_indexes has {len(message.item_indexes)} entries, more than the limit of "
                f"{message.item_count}")
    if kind == "items_added" and message.first_index + len(message.items) > MAX_ITEMS_PER_BATCH:
        return (f"ItemsAdded.first_index + items is {message.first_index + len(message.items)}, more than the limit of "
                f"{MAX_ITEMS_PER_BATCH}")
    if kind == "upload_request":
        for index, wanted in enumerate(message.items):
            if wanted.item_index >= MAX_ITEMS_PER_BATCH:
                return (f"UploadRequest.items[{index}].item_index is {wanted.item_index}, more than the limit of "
                        f"{MAX_ITEMS_PER_BATCH}")
    if kind == "status_reply":
        for index, batch in enumerate(message.batches):
            if batch.item_count > MAX_ITEMS_PER_BATCH:
                return (f"StatusReply.batches[{index}].item_count is {batch.item_count}, more than the limit of "
                        f"{MAX_ITEMS_PER_BATCH}")
    return None


# The conversions from the wire's messages to the models: every field of every message a client receives
# reaches a model (tests/test_models_cover_wire.py walks the descriptors and fails for one that does not).


def _refused_error(refusal) -> RefusedError:
    code = pb.RefusalCode.Name(refusal.code) if refusal.code in pb.RefusalCode.values() else "REFUSAL_CODE_UNSPECIFIED"
    return RefusedError(code, refusal.reason, refusal.request_id)


def _batch_accepted(accepted) -> BatchAccepted:
    return BatchAccepted(accepted.batch_id, accepted.item_count, accepted.coordinator_id, accepted.attached,
                         accepted.upload_spool)


def _retry_accepted(accepted) -> RetryAccepted:
    return RetryAccepted(accepted.batch_id, accepted.item_count, accepted.coordinator_id,
                         retried=tuple(accepted.item_indexes))


def _cancel_result(accepted) -> CancelResult:
    return CancelResult(accepted.batch_id, accepted.cancelled_items)


def _items_added(added) -> ItemsAdded:
    return ItemsAdded(added.batch_id, added.parent_index, added.first_index,
                      tuple(item.source for item in added.items), tuple(item.output_name for item in added.items))


def _item_result(finished, source: Optional[str]) -> ItemResult:
    output = failure = None
    if finished.WhichOneof("outcome") == "output":
        output = _output(finished.output)
    else:
        failure = _failure(finished.failure)
    return ItemResult(finished.batch_id, finished.item_index, finished.output_name, source, output, failure)


def _batch_finished(finished) -> BatchFinished:
    return BatchFinished(finished.batch_id, finished.succeeded, finished.failed, finished.cancelled)


def _failure_code(code: int) -> str:
    return pb.FailureCode.Name(code) if code in pb.FailureCode.values() else "FAILURE_CODE_UNSPECIFIED"


def _output(out) -> Output:
    return Output(bytes(out.data), out.media_type, out.width, out.height, out.location, out.size, out.crc32c,
                  tuple(out.warnings), out.held_on_worker)


def _failure(failure) -> Failure:
    return Failure(_failure_code(failure.code), failure.message, failure.transient, failure.retry_after_ms)


def _worker_status(w) -> WorkerStatus:
    return WorkerStatus(w.worker_id, w.hostname, w.slots, w.running, w.completed, w.failed, w.last_seen_ms_ago,
                        w.dropped_messages, w.version)


def _attempt_status(a) -> AttemptStatus:
    return AttemptStatus(a.task, a.attempt, _failure_code(a.code), a.error, a.transient, a.retried, a.retry_delay_ms,
                         a.worker, a.failed_unix_ms)


def _item_status(i) -> ItemStatus:
    return ItemStatus(i.item_index, i.source, i.state, i.error, tuple(i.warnings), i.location, i.attempts,
                      tuple(_attempt_status(a) for a in i.failed_attempts))


def _batch_status(b) -> BatchStatus:
    return BatchStatus(b.batch_id, b.item_count, b.succeeded, b.failed, b.cancelled,
                       tuple(_item_status(i) for i in b.items), b.priority, b.idempotency_key)


def _client_status(c) -> ClientStatus:
    return ClientStatus(c.client, c.queued_items, c.batches)


def _cluster_status(reply) -> ClusterStatus:
    workers = tuple(_worker_status(w) for w in reply.workers)
    batches = tuple(_batch_status(b) for b in reply.batches)
    clients = tuple(_client_status(c) for c in reply.clients)
    return ClusterStatus(reply.coordinator_id, workers, reply.queued_tasks, reply.running_tasks, reply.completed_tasks,
                         reply.failed_tasks, reply.tasks_per_second, reply.dropped_messages, batches, clients,
                         reply.max_queued_items_per_client, reply.max_batches_per_client,
                         _pair_status(reply.pair) if reply.HasField("pair") else None)


def _pair_position(position) -> PairPosition:
    return PairPosition(position.term, position.records)


def _pair_status(pair) -> PairStatus:
    def name(enum, value: int) -> str:
        return enum.Name(value) if value in enum.values() else enum.Name(0)
    return PairStatus(name(pb.PairRole, pair.role), name(pb.PairState, pair.state), name(pb.PairState, pair.peer_state),
                      _pair_position(pair.position), pair.lag_records, pair.lag_ms, pair.held_messages, pair.peer,
                      pair.history)


def _upload_metadata(metadata) -> UploadMetadata:
    return UploadMetadata(metadata.size, metadata.modified_unix_ns)


def _upload_wanted(wanted) -> UploadWanted:
    return UploadWanted(wanted.item_index, wanted.path, _upload_metadata(wanted.expected))


def _upload_request(request) -> UploadRequest:
    return UploadRequest(request.batch_id, tuple(_upload_wanted(w) for w in request.items), request.credit_bytes,
                         request.awaiting_items, request.spooled)
