"""The synchronous client: one DEALER socket, used by one thread. The files the coordinator asks for
(uploads) are sent while the client waits for anything (an answer, a batch's next event): one file at a
time, read only when asked, between looks at the socket."""

from __future__ import annotations

import collections
import time
from typing import Deque, Dict, Iterator, Optional, Sequence, Tuple, Union

import zmq
from zmq.utils.monitor import recv_monitor_message

from . import connection, local_inputs, local_upload
from .errors import RefusedError, ShiftworkError
from .keys import CurveKeys
from .models import (BatchAccepted, BatchEvent, BatchFinished, BatchResult, CancelResult, ClusterStatus, LeftOut,
                     TiltShift)
from .batch_state import BatchState
from .session import MAJOR, Answer, Event, FailAll, UploadsAsked
from .submit_options import SubmitOptions


class Batch(BatchState):
    """A batch this client follows: iterate it for its events as they come (`ItemsAdded`, `ItemResult`,
    then `BatchFinished`), or `wait()` for its `BatchResult`."""

    def __init__(self, client: "Client", accepted: BatchAccepted, left_out: Tuple[LeftOut, ...] = (),
                 notes: Tuple[str, ...] = ()):
        super().__init__(accepted, client._uploads, left_out, notes)
        self._client = client

    def __iter__(self) -> Iterator[BatchEvent]:
        return self.events()

    def events(self, timeout: Optional[float] = None) -> Iterator[BatchEvent]:
        """The batch's events until `BatchFinished` (included). `timeout`: seconds to wait for each
        event (None: as long as items take); `NoAnswerError` when it passes."""
        while self.finished is None:
            event = self._client._next_event(self.batch_id, timeout)
            self._record(event)
            yield event

    def wait(self, timeout: Optional[float] = None) -> BatchResult:
        """Waits until every item finished (`timeout` per event) and returns the batch's result."""
        for _ in self.events(timeout):
            pass
        return self._result()

    def cancel(self, items: Optional[Sequence[int]] = None) -> CancelResult:
        """Cancels the batch's unfinished items (or only `items`); they finish as cancelled."""
        return self._client.cancel(self.batch_id, items)


class Client(connection.Connection):
    """A client of a Shiftwork coordinator.

    ::

        with Client("tcp://127.0.0.1:5570", secret_key_file="keys/client.key",
                    coordinator_key_file="keys/coordinator.pub") as client:
            batch = client.submit(["https://example.org/street.jpg"], TiltShift(radius=12))
            for event in batch:
                if isinstance(event, ItemResult) and event.succeeded:
                    print(event.save("results"))
            print(client.status().workers)

    `endpoint` defaults to ``SHIFTWORK_COORDINATOR`` (else ``tcp://127.0.0.1:5570``); the key files to
    ``SHIFTWORK_SECRET_KEY`` and ``SHIFTWORK_COORDINATOR_KEY`` (none: a coordinator run with
    ``--insecure``). `timeout` is how many seconds a request waits for its answer. Not thread-safe."""

    def __init__(self, endpoint: Optional[str] = None, *, secret_key_file: Optional[str] = None,
                 coordinator_key_file: Optional[str] = None, keys: Optional[CurveKeys] = None,
                 timeout: float = 10.0, protocol_major: int = MAJOR):
        super().__init__(zmq.Context(), endpoint, secret_key_file, coordinator_key_file, keys, timeout, protocol_major)
        self._answers: Dict[str, Answer] = {}
        self._waiting: set = set()
        self._events: Dict[str, Deque[object]] = {}

    def close(self) -> None:
        """Closes the socket (unsent messages wait at most 200 ms)."""
        self._close_socket()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------------ requests

    def submit(self, sources: Sequence[str], parameters: TiltShift = TiltShift(), *, priority: Union[int, str] = 0,
               idempotency_key: Optional[str] = None, retries: Optional[int] = None, deadline: Optional[int] = None,
               sink: Optional[str] = None, s3_endpoint: Optional[str] = None, shared_disk: bool = False,
               flat: bool = False) -> Batch:
        """Submits a batch of images and returns it once accepted: URLs (workers fetch them), local files and
        directories (their images, found as ``shiftwork submit DIR`` finds them, their folders kept in the
        output names unless `flat`). A local file's bytes are uploaded: sent, one file at a time, when the
        coordinator asks for them, while this client waits for anything (iterate the batch, or `wait()`);
        a file that changed or vanished by then fails its item, naming it. A file that cannot be uploaded
        (gone, empty, over the 100 MiB upload limit) is left out before anything is sent, the rest goes on:
        ``batch.left_out`` says which and why. `shared_disk`: send local files as their paths instead, for
        workers started with ``--allow-local-files`` that read a disk shared with this machine.

        `priority` (-10…10, or low, normal, high), `idempotency_key`, `retries` (0…10), `deadline` (seconds),
        `sink` (a directory the workers reach, or ``s3://BUCKET/PREFIX``) and `s3_endpoint`: see `SubmitOptions`.
        A value out of range raises `ValueError` before anything is sent. With an idempotency key the
        coordinator already knows, the batch returned is that one (``batch.attached``).

        Raises `RefusedError` (with its code) when the coordinator refuses the batch, `NoAnswerError` when
        it does not answer within `timeout`, `ProtocolVersionError` for a coordinator of another major
        version, `AuthenticationError` when it refuses this client's key."""
        options = SubmitOptions(priority, idempotency_key, retries, deadline, sink, s3_endpoint)
        inputs = local_inputs.prepare(sources, upload=not shared_disk, flat=flat)
        request_id, data = self._session.submit(inputs, parameters, options=options)
        self._uploads.allow(inputs.upload_paths)
        accepted = self._request(request_id, data, "the batch")
        return Batch(self, accepted, inputs.left_out, inputs.notes)

    def results(self, batch_id: str, *, uploads: Sequence[str] = ()) -> Batch:
        """Attaches to a batch (submitted by anyone, perhaps before a restart) and returns it: its items
        finished so far come first, then the others as they finish. Needs a coordinator with ``--data-dir``.
        The batch's uploaded files that the coordinator does not hold are sent when it asks, as
        ``shiftwork results`` does: the batch's sources that are absolute paths (asked of the coordinator with
        `status` first), and any file at or below `uploads` (files or directories); each only while it is what
        was announced (its size and modification time)."""
        self._allow_uploads_of(batch_id, uploads)
        request_id, data = self._session.fetch(batch_id)
        accepted = self._request(request_id, data, f"the results of {batch_id}")
        return Batch(self, accepted)

    def retry(self, batch_id: str, items: Optional[Sequence[Union[str, int]]] = None, *,
              uploads: Sequence[str] = ()) -> Batch:
        """Runs a finished batch's failed and cancelled items again as new attempts of the same batch (or
        only `items`: output names, sources or indexes) and returns it: its events are the retried items'
        results, then `BatchFinished` with the whole batch's counts. `Batch.retried` lists the items; empty
        when there was nothing to retry (every item had succeeded; the batch is finished at once).

        An uploaded item whose bytes the coordinator no longer holds is asked for again: `uploads` as for
        `results`.

        Raises `RefusedError` for an unknown batch (``REFUSAL_CODE_UNKNOWN_BATCH``), a batch still running,
        a name that is no item of it or an item that succeeded (``REFUSAL_CODE_INVALID_REQUEST``)."""
        self._allow_uploads_of(batch_id, uploads)
        request_id, data = self._session.retry(batch_id, items)
        accepted = self._request(request_id, data, f"the retry of {batch_id}")
        return Batch(self, accepted)

    def status(self, batch_id: str = "") -> ClusterStatus:
        """The cluster's status; with `batch_id`, that batch with its items."""
        request_id, data = self._session.status(batch_id)
        return self._request(request_id, data, "the status request")

    def cancel(self, batch_id: str, items: Optional[Sequence[int]] = None) -> CancelResult:
        """Cancels a batch's unfinished items (all of them, or `items`)."""
        request_id, data = self._session.cancel(batch_id, items)
        return self._request(request_id, data, f"the cancel of {batch_id} (a coordinator older than protocol "
                                               f"minor 2 carries a cancel out without answering)")

    # ------------------------------------------------------------------------------------------------ plumbing

    def _allow_uploads_of(self, batch_id: str, roots: Sequence[str]) -> None:
        """Lets this client send the local files of `batch_id` (its absolute sources, as `status` lists them)
        and those under `roots`. A batch the coordinator does not know is left to the request that follows."""
        self._uploads.allow_under(roots)
        try:
            status = self.status(batch_id)
        except RefusedError:
            return
        self._uploads.allow(local_inputs.absolute_sources(status, batch_id))

    def _request(self, request_id: str, data: bytes, what: str):
        if self._broken is not None:
            raise self._broken
        self._waiting.add(request_id)
        try:
            self._socket.send(data)
            deadline = time.monotonic() + self.timeout
            turns_left = len(self.endpoints) - 1
            while True:
                while request_id not in self._answers:
                    if not self._pump(deadline):
                        if turns_left > 0:  # several coordinators: the request goes to the next one
                            turns_left -= 1
                            self._turn()
                            self._socket.send(self._session.rewitnessed(data))
                            deadline = time.monotonic() + self.timeout
                            continue
                        self._session.forget(request_id)
                        raise connection.no_answer(self.endpoint, self.timeout, self._keys, what)
                answer = self._answers.pop(request_id)
                if not connection.is_passive(answer.error):
                    break
                if turns_left == 0:  # every coordinator of the list said passive
                    self._session.forget(request_id)
                    break
                turns_left -= 1  # a passive coordinator of a pair: the request goes to the next one at once
                self._turn(passive=True)
                self._socket.send(self._session.rewitnessed(data))
                deadline = time.monotonic() + self.timeout
        finally:
            self._waiting.discard(request_id)
        if answer.error is not None:
            raise answer.error
        return answer.value

    def _next_event(self, batch_id: str, timeout: Optional[float]):
        queue = self._events.setdefault(batch_id, collections.deque())
        deadline = None if timeout is None else time.monotonic() + timeout
        while not queue:
            if self._broken is not None:
                raise self._broken
            if not self._pump(deadline):
                raise connection.no_answer(self.endpoint, timeout or 0, self._keys, f"batch {batch_id}")
        event = queue.popleft()
        if isinstance(event, ShiftworkError):
            self._events.pop(batch_id, None)
            self._session.close_stream(batch_id)
            raise event
        if isinstance(event, BatchFinished):
            self._events.pop(batch_id, None)
        return event

    def _pump(self, deadline: Optional[float]) -> bool:
        """Sends the next file asked for, if any, then receives and routes what arrives before `deadline`
        (None: no limit; only a look when a file was sent or more wait); False when nothing happened."""
        sent = self._send_next_upload()
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        if self._monitor is not None:
            poller.register(self._monitor, zmq.POLLIN)
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if sent or self._uploads.pending:
            left = 0.0
        ready = dict(poller.poll(None if left is None else int(left * 1000)))
        if not ready:
            return sent
        if self._monitor is not None and self._monitor in ready:
            event = recv_monitor_message(self._monitor)
            if event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                self._fail_all(connection.refused_key(self.endpoint, event["value"]))
        if self._socket in ready:
            for delivery in self._session.receive(self._socket.recv_multipart()):
                self._deliver(delivery)
        return True

    def _send_next_upload(self) -> bool:
        """Reads the next file asked for and sends its bytes (or why not); False when none was asked."""
        asked = self._uploads.next()
        if asked is None:
            return False
        batch_id, wanted = asked
        answer = local_upload.read(wanted)
        self._socket.send(self._session.upload_data(batch_id, answer.item_index, answer.data, answer.crc32c,
                                                    answer.failure), copy=False)
        return True

    def _deliver(self, delivery) -> None:
        if isinstance(delivery, UploadsAsked):
            self._uploads.asked(delivery.request)
        elif isinstance(delivery, Answer):
            self._answers[delivery.request_id] = delivery
            if isinstance(delivery.value, BatchAccepted):  # its items may follow in the next message
                self._events.setdefault(delivery.value.batch_id, collections.deque())
        elif isinstance(delivery, Event):
            queue = self._events.get(delivery.batch_id)
            if queue is not None:
                queue.append(delivery.event)
        elif isinstance(delivery, FailAll):
            self._fail_all(delivery.error)

    def _fail_all(self, error: ShiftworkError) -> None:
        """Fails every pending request and stream; a version mismatch or a refused key fails every later
        call too (nothing this client sends can succeed)."""
        for request_id in self._waiting:
            self._session.forget(request_id)
            self._answers[request_id] = Answer(request_id, error=error)
        for queue in self._events.values():
            queue.append(error)
        self._end_if_final(error)
