"""The asyncio client: the same calls as `Client`, awaited; one task reads the socket and routes every
message to the request or the batch it belongs to, so requests and batch streams run concurrently."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Dict, Optional, Sequence, Union

import zmq
import zmq.asyncio
from zmq.utils.monitor import parse_monitor_message

from . import connection
from .errors import ShiftworkError
from .keys import CurveKeys
from .models import BatchAccepted, BatchEvent, BatchResult, CancelResult, ClusterStatus, TiltShift
from .batch_state import BatchState
from .session import MAJOR, Answer, Event, FailAll
from .submit_options import SubmitOptions


class AsyncBatch(BatchState):
    """A batch this client follows: ``async for event in batch`` for its events (`ItemsAdded`,
    `ItemResult`, then `BatchFinished`), or ``await batch.wait()`` for its `BatchResult`."""

    def __init__(self, client: "AsyncClient", accepted: BatchAccepted, queue: "asyncio.Queue[object]"):
        super().__init__(accepted)
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
                     s3_endpoint: Optional[str] = None) -> AsyncBatch:
        """Submits a batch of image URLs or paths (workers fetch them) and returns it once accepted; the
        options and errors are those of `Client.submit`."""
        options = SubmitOptions(priority, idempotency_key, retries, deadline, sink, s3_endpoint)
        request_id, data = self._session.submit(sources, parameters, options=options)
        accepted = await self._request(request_id, data, "the batch")
        return AsyncBatch(self, accepted, self._queues[accepted.batch_id])

    async def results(self, batch_id: str) -> AsyncBatch:
        """Attaches to a batch and returns it: finished items first, then the others as they finish."""
        request_id, data = self._session.fetch(batch_id)
        accepted = await self._request(request_id, data, f"the results of {batch_id}")
        return AsyncBatch(self, accepted, self._queues[accepted.batch_id])

    async def retry(self, batch_id: str, items: Optional[Sequence[Union[str, int]]] = None) -> AsyncBatch:
        """Runs a finished batch's failed and cancelled items again (or only `items`), as `Client.retry`."""
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
                    await self._socket.send(data)
                except asyncio.TimeoutError:
                    if turns_left == 0:
                        raise
                    turns_left -= 1  # several coordinators: the request goes to the next one
                    self._turn()
                    await self._socket.send(data)
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
        self._readers.append(asyncio.ensure_future(self._read()))
        if self._monitor is not None:
            self._readers.append(asyncio.ensure_future(self._watch()))

    async def _read(self) -> None:
        while True:
            frames = await self._socket.recv_multipart()
            for delivery in self._session.receive(frames):
                self._deliver(delivery)

    async def _watch(self) -> None:
        while self._monitor is not None:
            event = parse_monitor_message(await self._monitor.recv_multipart())
            if event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                self._fail_all(connection.refused_key(self.endpoint, event["value"]))

    def _deliver(self, delivery) -> None:
        if isinstance(delivery, Answer):
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
