"""The asyncio client: the same calls as `Client`, awaited; one task reads the socket and routes every
message to the request or the batch it belongs to, so requests and batch streams run concurrently. Another
sends the files the coordinator asks for (uploads), one at a time, each read on an executor thread (file I/O
never blocks the event loop), as soon as they are asked, whether or not anyone awaits the batch."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Dict, Optional, Sequence, Tuple, Union

import zmq
import zmq.asyncio
from zmq.utils.monitor import parse_monitor_message

from . import connection, local_inputs, local_upload
from .errors import RefusedError, ShiftworkError
from .keys import CurveKeys
from .models import BatchAccepted, BatchEvent, BatchResult, CancelResult, ClusterStatus, LeftOut, TiltShift
from .batch_state import BatchState
from .session import MAJOR, Answer, Event, FailAll, UploadsAsked
from .submit_options import SubmitOptions


class AsyncBatch(BatchState):
    """A batch this client follows: ``async for event in batch`` for its events (`ItemsAdded`,
    `ItemResult`, then `BatchFinished`), or ``await batch.wait()`` for its `BatchResult`."""

    def __init__(self, client: "AsyncClient", accepted: BatchAccepted, queue: "asyncio.Queue[object]",
                 left_out: Tuple[LeftOut, ...] = (), notes: Tuple[str, ...] = ()):
        super().__init__(accepted, client._uploads, left_out, notes)
        self._client = client
        self._queue = queue

    def __aiter__(self) -> AsyncIterator[BatchEvent]:
        return self.events()

    async def events(self, timeout: Optional[float] = None) -> AsyncIterator[BatchEvent]:
        """The batch's events until `BatchFinished` (included); `timeout` per event (None: no limit)."""
        while self.finished is None:
            try:
                event = await asyncio.wait_for(self._queue.get(), timeout)
            except asyncio.TimeoutError:
                raise connection.no_answer(self._client.endpoint, timeout or 0, self._client._keys,
                                           f"batch {self.batch_id}") from None
            if isinstance(event, ShiftworkError):
                self._client._close_stream(self.batch_id)
                raise event
            self._record(event)
            if self.finished is not None:
                self._client._close_stream(self.batch_id)
            yield event

    async def wait(self, timeout: Optional[float] = None) -> BatchResult:
        """Waits until every item finished (`timeout` per event) and returns the batch's result."""
        async for _ in self.events(timeout):
            pass
        return self._result()

    async def cancel(self, items: Optional[Sequence[int]] = None) -> CancelResult:
        """Cancels the batch's unfinished items (or only `items`); they finish as cancelled."""
        return await self._client.cancel(self.batch_id, items)


class AsyncClient(connection.Connection):
    """The asyncio form of `Client` (same arguments, same errors)::

        async with AsyncClient("tcp://127.0.0.1:5570") as client:
            batch = await client.submit(["https://example.org/street.jpg"])
            result = await batch.wait()
            status = await client.status(batch.batch_id)

    Use it from one event loop."""

    def __init__(self, endpoint: Optional[str] = None, *, secret_key_file: Optional[str] = None,
                 coordinator_key_file: Optional[str] = None, keys: Optional[CurveKeys] = None,
                 timeout: float = 10.0, protocol_major: int = MAJOR):
        super().__init__(zmq.asyncio.Context(), endpoint, secret_key_file, coordinator_key_file, keys, timeout,
                         protocol_major)
        self._answers: Dict[str, "asyncio.Future[Answer]"] = {}
        self._queues: Dict[str, "asyncio.Queue[object]"] = {}
        self._readers: list = []
        self._upload_wanted: Optional[asyncio.Event] = None

    async def close(self) -> None:
        """Stops reading and closes the socket (unsent messages wait at most 200 ms)."""
        for task in self._readers:
            task.cancel()
        for task in self._readers:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._readers = []
        self._close_socket()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    # ------------------------------------------------------------------------------------------------ requests

    async def submit(self, sources: Sequence[str], parameters: TiltShift = TiltShift(), *,
                     priority: Union[int, str] = 0, idempotency_key: Optional[str] = None, retries: Optional[int] = None,
                     deadline: Optional[int] = None, sink: Optional[str] = None,
                     s3_endpoint: Optional[str] = None, shared_disk: bool = False, flat: bool = False) -> AsyncBatch:
        """Submits a batch of images (URLs, local files, directories) and returns it once accepted; local files
        are uploaded when the coordinator asks (by a task of this client's, awaited or not); the options and
        errors are those of `Client.submit`. The directories are walked on an executor thread."""
        options = SubmitOptions(priority, idempotency_key, retries, deadline, sink, s3_endpoint)
        inputs = await asyncio.get_running_loop().run_in_executor(
            None, lambda: local_inputs.prepare(sources, upload=not shared_disk, flat=flat))
        request_id, data = self._session.submit(inputs, parameters, options=options)
        self._uploads.allow(inputs.upload_paths)
        accepted = await self._request(request_id, data, "the batch")
        return AsyncBatch(self, accepted, self._queues[accepted.batch_id], inputs.left_out, inputs.notes)

    async def results(self, batch_id: str, *, uploads: Sequence[str] = ()) -> AsyncBatch:
        """Attaches to a batch and returns it: finished items first, then the others as they finish;
        the batch's local files sent when asked, as for `Client.results`."""
        await self._allow_uploads_of(batch_id, uploads)
        request_id, data = self._session.fetch(batch_id)
        accepted = await self._request(request_id, data, f"the results of {batch_id}")
        return AsyncBatch(self, accepted, self._queues[accepted.batch_id])

    async def retry(self, batch_id: str, items: Optional[Sequence[Union[str, int]]] = None, *,
                    uploads: Sequence[str] = ()) -> AsyncBatch:
        """Runs a finished batch's failed and cancelled items again (or only `items`), as `Client.retry`."""
        await self._allow_uploads_of(batch_id, uploads)
        request_id, data = self._session.retry(batch_id, items)
        accepted = await self._request(request_id, data, f"the retry of {batch_id}")
        return AsyncBatch(self, accepted, self._queues[accepted.batch_id])

    async def status(self, batch_id: str = "") -> ClusterStatus:
        """The cluster's status; with `batch_id`, that batch with its items."""
        request_id, data = self._session.status(batch_id)
        return await self._request(request_id, data, "the status request")

    async def cancel(self, batch_id: str, items: Optional[Sequence[int]] = None) -> CancelResult:
        """Cancels a batch's unfinished items (all of them, or `items`)."""
        request_id, data = self._session.cancel(batch_id, items)
        return await self._request(request_id, data, f"the cancel of {batch_id} (a coordinator older than protocol "
                                                     f"minor 2 carries a cancel out without answering)")

    # ------------------------------------------------------------------------------------------------ plumbing

    async def _allow_uploads_of(self, batch_id: str, roots: Sequence[str]) -> None:
        """As `Client._allow_uploads_of`."""
        self._uploads.allow_under(roots)
        try:
            status = await self.status(batch_id)
        except RefusedError:
            return
        self._uploads.allow(local_inputs.absolute_sources(status, batch_id))

    async def _request(self, request_id: str, data: bytes, what: str):
        if self._broken is not None:
            raise self._broken
        self._start_reading()
        future: "asyncio.Future[Answer]" = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        try:
            await self._socket.send(data)
            turns_left = len(self.endpoints) - 1
            while True:
                try:
                    # shield: a timeout leaves the future waiting for the next coordinator's answer
                    answer = await asyncio.wait_for(asyncio.shield(future), self.timeout)
                    if not connection.is_passive(answer.error) or turns_left == 0:
                        break
                    # A passive coordinator of a pair: the request goes to the next one at once.
                    turns_left -= 1
                    future = asyncio.get_running_loop().create_future()
                    self._answers[request_id] = future
                    self._turn(passive=True)
                    await self._socket.send(self._session.rewitnessed(data))
                except asyncio.TimeoutError:
                    if turns_left == 0:
                        raise
                    turns_left -= 1  # several coordinators: the request goes to the next one
                    self._turn()
                    await self._socket.send(self._session.rewitnessed(data))
        except asyncio.TimeoutError:
            self._session.forget(request_id)
            raise connection.no_answer(self.endpoint, self.timeout, self._keys, what) from None
        finally:
            self._answers.pop(request_id, None)
        if connection.is_passive(answer.error):  # every coordinator of the list said passive
            self._session.forget(request_id)
        if answer.error is not None:
            raise answer.error
        return answer.value

    def _start_reading(self) -> None:
        if self._readers:
            return
        self._upload_wanted = asyncio.Event()
        self._readers.append(asyncio.ensure_future(self._read()))
        self._readers.append(asyncio.ensure_future(self._upload()))
        if self._monitor is not None:
            self._readers.append(asyncio.ensure_future(self._watch()))

    async def _read(self) -> None:
        while True:
            frames = await self._socket.recv_multipart()
            for delivery in self._session.receive(frames):
                self._deliver(delivery)

    async def _upload(self) -> None:
        """Sends the files asked for, in order, one at a time: each read on an executor thread, then handed to
        the socket before the next is read (this client holds no more than one file beyond what it sent)."""
        assert self._upload_wanted is not None
        loop = asyncio.get_running_loop()
        while True:
            await self._upload_wanted.wait()
            self._upload_wanted.clear()
            while True:
                asked = self._uploads.next()
                if asked is None:
                    break
                batch_id, wanted = asked
                answer = await loop.run_in_executor(None, local_upload.read, wanted)
                await self._socket.send(self._session.upload_data(batch_id, answer.item_index, answer.data,
                                                                  answer.crc32c, answer.failure), copy=False)

    async def _watch(self) -> None:
        while self._monitor is not None:
            event = parse_monitor_message(await self._monitor.recv_multipart())
            if event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                self._fail_all(connection.refused_key(self.endpoint, event["value"]))

    def _deliver(self, delivery) -> None:
        if isinstance(delivery, UploadsAsked):
            self._uploads.asked(delivery.request)
            if self._upload_wanted is not None and self._uploads.pending:
                self._upload_wanted.set()
        elif isinstance(delivery, Answer):
            if isinstance(delivery.value, BatchAccepted):  # its items may follow in the next message
                self._queues.setdefault(delivery.value.batch_id, asyncio.Queue())
            future = self._answers.get(delivery.request_id)
            if future is not None and not future.done():
                future.set_result(delivery)
        elif isinstance(delivery, Event):
            queue = self._queues.get(delivery.batch_id)
            if queue is not None:
                queue.put_nowait(delivery.event)
        elif isinstance(delivery, FailAll):
            self._fail_all(delivery.error)

    def _close_stream(self, batch_id: str) -> None:
        self._queues.pop(batch_id, None)
        self._session.close_stream(batch_id)

    def _fail_all(self, error: ShiftworkError) -> None:
        for request_id, future in list(self._answers.items()):
            self._session.forget(request_id)
            if not future.done():
                future.set_result(Answer(request_id, error=error))
        for queue in self._queues.values():
            queue.put_nowait(error)
        self._end_if_final(error)
