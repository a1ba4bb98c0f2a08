"""The client against a real coordinator and real workers on loopback TCP (tests/cluster.py), in its
synchronous and asyncio forms."""

from __future__ import annotations

import asyncio
import os
import struct
import tempfile
import threading
import unittest

import zmq

from cluster import REPOSITORY, LocalCluster
from shiftwork_client import (AsyncClient, AuthenticationError, BatchFinished, Client, ItemResult, ItemsAdded,
                              KeyFileError, NoAnswerError, ProtocolVersionError, RefusedError, TiltShift)
from shiftwork_client._proto.shiftwork.v1 import shiftwork_pb2 as pb

SAMPLES = os.path.join(REPOSITORY, "samples")
ROCKET = os.path.join(SAMPLES, "rocket.jpg")      # 640x427 JPEG
CHELSEA = os.path.join(SAMPLES, "chelsea.png")    # 451x300 PNG


def image_size(data: bytes):
    """(width, height) from a PNG's IHDR or a JPEG's SOF marker."""
    if data.startswith(b"\x89PNG"):
        return struct.unpack(">II", data[16:24])
    offset = 2
    while offset + 9 < len(data):
        marker, length = data[offset + 1], struct.unpack(">H", data[offset + 2:offset + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[offset + 5:offset + 9])
            return width, height
        offset += 2 + length
    raise ValueError("no SOF marker")


class ClusterTestCase(unittest.TestCase):
    workers = 1
    data_dir = False
    curve = False
    host = "127.0.0.1"

    def setUp(self):
        self.cluster = LocalCluster(workers=self.workers, data_dir=self.data_dir, curve=self.curve, host=self.host)
        self.addCleanup(self.cluster.stop)
        self.out = tempfile.mkdtemp(prefix="shiftwork-client-out-")
        self.addCleanup(lambda: __import__("shutil").rmtree(self.out, ignore_errors=True))

    def client(self, **options) -> Client:
        client = Client(self.cluster.endpoint, timeout=options.pop("timeout", 30), **options)
        self.addCleanup(client.close)
        return client


class SynchronousClientTests(ClusterTestCase):
    def test_submit_yields_each_item_then_the_batch_and_status_agrees(self):
        client = self.client()
        batch = client.submit([ROCKET, CHELSEA], TiltShift(radius=6))
        self.assertTrue(batch.batch_id.startswith("b-"), batch.batch_id)
        self.assertEqual(batch.item_count, 2)
        events = list(batch)
        self.assertIsInstance(events[-1], BatchFinished, events)
        items = sorted((e for e in events if isinstance(e, ItemResult)), key=lambda item: item.index)
        self.assertEqual([item.index for item in items], [0, 1], self.cluster.output())
        for item, source, size, extension in [(items[0], ROCKET, (640, 427), "jpg"), (items[1], CHELSEA, (451, 300), "png")]:
            self.assertTrue(item.succeeded, item.failure)
            self.assertEqual(item.source, source)
            self.assertEqual((item.output.width, item.output.height), size)
            self.assertEqual(image_size(item.output.data), size)
            path = item.save(self.out)
            self.assertEqual(path, os.path.join(self.out, f"{os.path.splitext(os.path.basename(source))[0]}.{extension}"))
            self.assertEqual(item.save(self.out), path[:-len(extension) - 1] + f"-2.{extension}", "an existing file was replaced")
        result = batch.wait()
        self.assertEqual((result.succeeded, result.failed, result.cancelled), (2, 0, 0))
        self.assertTrue(result.all_succeeded)

        status = client.status(batch.batch_id)
        self.assertEqual([b.batch_id for b in status.batches], [batch.batch_id])
        self.assertEqual([(i.index, i.state) for i in status.batches[0].items], [(0, "succeeded"), (1, "succeeded")])
        self.assertEqual([w.worker_id for w in status.workers], ["test-worker-0"])
        self.assertEqual(status.workers[0].slots, 2)
        self.assertTrue(status.coordinator_id)

    def test_a_failed_item_carries_its_code_and_message(self):
        missing = os.path.join(self.out, "missing.jpg")
        result = self.client().submit([ROCKET, missing]).wait(timeout=60)
        self.assertEqual((result.succeeded, result.failed), (1, 1))
        failed = result.items[1]
        self.assertFalse(failed.succeeded)
        self.assertEqual(failed.failure.code, "FAILURE_CODE_DOWNLOAD")
        self.assertIn("missing.jpg", failed.failure.message)
        self.assertIn("no such file", failed.failure.message)

    def test_a_manifest_adds_its_images(self):
        manifest = os.path.join(self.out, "list.txt")
        with open(manifest, "w") as file:
            file.write(f"{ROCKET}\n{CHELSEA}\n")
        batch = self.client().submit([manifest])
        events = list(batch)
        added = [e for e in events if isinstance(e, ItemsAdded)]
        self.assertEqual(len(added), 1, events)
        self.assertEqual((added[0].parent_index, added[0].first_index, added[0].sources), (0, 1, (ROCKET, CHELSEA)))
        items = {e.index: e for e in events if isinstance(e, ItemResult)}
        self.assertTrue(items[0].is_manifest)
        self.assertEqual(items[1].source, ROCKET)
        self.assertEqual(items[2].source, CHELSEA)
        self.assertTrue(items[1].succeeded and items[2].succeeded)
        self.assertEqual(events[-1], BatchFinished(batch.batch_id, 3, 0, 0))

    def test_submit_refused_for_a_bad_source_names_the_item(self):
        with self.assertRaises(RefusedError) as refused:
            self.client().submit(["bad\u202esource.jpg"])
        self.assertEqual(refused.exception.code, "REFUSAL_CODE_INVALID_REQUEST")
        self.assertIn("item 0", refused.exception.reason)

    def test_results_without_a_data_directory_are_refused_with_their_code(self):
        with self.assertRaises(RefusedError) as refused:
            self.client().results("b-00000000")
        self.assertIn(refused.exception.code, ("REFUSAL_CODE_NO_STORED_RESULTS", "REFUSAL_CODE_UNKNOWN_BATCH"))

    def test_a_bad_key_file_is_an_error_that_says_what_it_expected(self):
        path = os.path.join(self.out, "client.key")
        with open(path, "w") as file:
            file.write("# a comment\nnot a key\n")
        with self.assertRaises(KeyFileError) as error:
            Client(self.cluster.endpoint, secret_key_file=path, coordinator_key_file=path)
        self.assertIn("does not hold one CurveZMQ secret key", str(error.exception))
        self.assertNotIn("not a key", str(error.exception), "the error must not quote the file")


class CancelTests(ClusterTestCase):
    workers = 0  # nothing runs: every item waits for a worker until it is cancelled

    def test_cancel_answers_with_the_count_and_the_items_finish_as_cancelled(self):
        client = self.client()
        batch = client.submit([ROCKET, CHELSEA, ROCKET])
        cancelled = batch.cancel([0, 2])
        self.assertEqual((cancelled.batch_id, cancelled.cancelled_items), (batch.batch_id, 2))
        self.assertEqual(client.cancel(batch.batch_id).cancelled_items, 1)
        result = batch.wait(timeout=60)
        self.assertEqual((result.succeeded, result.failed, result.cancelled), (0, 0, 3))
        self.assertTrue(all(item.failure.cancelled for item in result.items), result.items)

    def test_cancel_of_an_unknown_batch_is_refused(self):
        with self.assertRaises(RefusedError) as refused:
            self.client().cancel("b-ffffffff")
        self.assertEqual(refused.exception.code, "REFUSAL_CODE_UNKNOWN_BATCH")


class StoredResultsTests(ClusterTestCase):
    data_dir = True

    def test_results_fetch_a_finished_batch_again_from_another_client(self):
        first = self.client().submit([ROCKET, CHELSEA]).wait(timeout=60)
        again = self.client().results(first.batch_id)
        self.assertEqual(again.item_count, 2)
        result = again.wait(timeout=60)
        self.assertEqual([item.output.data for item in result.items], [item.output.data for item in first.items])
        with self.assertRaises(RefusedError) as refused:
            self.client().results("b-00000000")
        self.assertEqual(refused.exception.code, "REFUSAL_CODE_UNKNOWN_BATCH")


class RetryTests(ClusterTestCase):
    def test_retry_reruns_the_failed_item_only_and_then_has_nothing_left(self):
        later = os.path.join(self.out, "later.png")
        client = self.client()
        first = client.submit([ROCKET, later]).wait(timeout=60)
        self.assertEqual((first.succeeded, first.failed), (1, 1))
        with self.assertRaises(RefusedError) as refused:
            client.retry(first.batch_id, items=["nosuch"])
        self.assertEqual(refused.exception.code, "REFUSAL_CODE_INVALID_REQUEST")
        self.assertIn("has no item nosuch", str(refused.exception))
        with self.assertRaises(RefusedError) as unknown:
            client.retry("b-00000000")
        self.assertEqual(unknown.exception.code, "REFUSAL_CODE_UNKNOWN_BATCH")

        with open(CHELSEA, "rb") as source, open(later, "wb") as target:
            target.write(source.read())
        batch = client.retry(first.batch_id)
        self.assertEqual((batch.batch_id, batch.retried, batch.item_count), (first.batch_id, (1,), 2))
        result = batch.wait(timeout=60)
        self.assertEqual([item.index for item in result.items], [1], "only the retried item is streamed")
        self.assertEqual(image_size(result.items[0].output.data), (451, 300))
        self.assertEqual((result.succeeded, result.failed), (2, 0), "the whole batch's counts")
        item = [i for i in client.status(first.batch_id).batches[0].items if i.index == 1][0]
        self.assertEqual(item.state, "succeeded")

        nothing = client.retry(first.batch_id)
        self.assertEqual(nothing.retried, ())
        self.assertEqual(nothing.wait(timeout=5).items, ())

    def test_async_retry(self):
        later = os.path.join(self.out, "later.jpg")

        async def scenario():
            async with AsyncClient(self.cluster.endpoint, timeout=30) as client:
                first = await (await client.submit([later])).wait(60)
                with open(ROCKET, "rb") as source, open(later, "wb") as target:
                    target.write(source.read())
                again = await client.retry(first.batch_id, items=[0])
                return first, again.retried, await again.wait(60)

        first, retried, result = asyncio.run(scenario())
        self.assertEqual(first.failed, 1)
        self.assertEqual(retried, (0,))
        self.assertEqual((result.succeeded, result.failed), (1, 0))
        self.assertEqual(image_size(result.items[0].output.data), (640, 427))


class AsyncClientTests(ClusterTestCase):
    workers = 2

    def test_two_batches_and_a_status_run_concurrently(self):
        async def scenario():
            async with AsyncClient(self.cluster.endpoint, timeout=30) as client:
                first, second = await asyncio.gather(client.submit([ROCKET]), client.submit([CHELSEA, ROCKET]))
                one = await first.wait(60)  # by then both workers have registered (they start with the test)
                status, two = await asyncio.gather(client.status(), second.wait(60))
                return first, second, status, one, two

        first, second, status, one, two = asyncio.run(scenario())
        self.assertNotEqual(first.batch_id, second.batch_id)
        self.assertEqual(sorted(w.worker_id for w in status.workers), ["test-worker-0", "test-worker-1"])
        self.assertEqual((one.batch_id, one.succeeded), (first.batch_id, 1))
        self.assertEqual((two.batch_id, two.succeeded), (second.batch_id, 2))
        self.assertEqual(image_size(two.items[0].output.data), (451, 300))

    def test_async_events_and_cancel(self):
        async def scenario():
            async with AsyncClient(self.cluster.endpoint, timeout=30) as client:
                batch = await client.submit([ROCKET, "/nonexistent/x.png"])
                events = [event async for event in batch]
                with self.assertRaises(RefusedError):
                    await client.cancel("b-ffffffff")
                return events

        events = asyncio.run(scenario())
        self.assertIsInstance(events[-1], BatchFinished)
        self.assertEqual((events[-1].succeeded, events[-1].failed), (1, 1))


class IPv6Tests(ClusterTestCase):
    """A coordinator listening on IPv6 loopback only: the client's socket has IPv6 on (ZMQ_IPV6)."""
    host = "[::1]"
    curve = True

    def test_both_forms_submit_over_ipv6_with_keys(self):
        self.assertTrue(self.cluster.endpoint.startswith("tcp://[::1]:"), self.cluster.endpoint)
        keys = dict(secret_key_file=self.cluster.key("client.key"), coordinator_key_file=self.cluster.key("coordinator.pub"))
        self.assertEqual(self.client(**keys).submit([CHELSEA]).wait(60).succeeded, 1, self.cluster.output())

        async def scenario():
            async with AsyncClient(self.cluster.endpoint, timeout=30, **keys) as client:
                batch = await client.submit([ROCKET])
                return await batch.wait(60)

        self.assertEqual(asyncio.run(scenario()).succeeded, 1, self.cluster.output())


class CurveTests(ClusterTestCase):
    curve = True

    def test_a_listed_key_is_served(self):
        client = self.client(secret_key_file=self.cluster.key("client.key"),
                             coordinator_key_file=self.cluster.key("coordinator.pub"))
        self.assertEqual(client.submit([CHELSEA]).wait(60).succeeded, 1)

    def test_an_unlisted_key_is_told_so_in_both_forms(self):
        options = dict(secret_key_file=self.cluster.key("stranger.key"), coordinator_key_file=self.cluster.key("coordinator.pub"))
        with self.assertRaises(AuthenticationError) as refused:
            self.client(timeout=20, **options).status()
        self.assertIn("refused this client's CurveZMQ key", str(refused.exception))

        async def scenario():
            async with AsyncClient(self.cluster.endpoint, timeout=20, **options) as client:
                await client.status()

        with self.assertRaises(AuthenticationError):
            asyncio.run(scenario())


class VersionTests(ClusterTestCase):
    def test_a_coordinator_of_another_major_version_is_named_with_both_versions(self):
        # This client plays a peer of protocol 2; the real coordinator (protocol 1) refuses it.
        with self.assertRaises(ProtocolVersionError) as error:
            self.client(protocol_major=2).status()
        message = str(error.exception)
        self.assertIn("major version 1", message)
        self.assertIn("major version 2", message)
        self.assertEqual((error.exception.coordinator_major, error.exception.client_major), (1, 2))

    def test_a_major_two_coordinator_answering_is_named(self):
        # A peer speaking protocol 2 answers everything with a protocol-2 refusal, as a coordinator of
        # another major version does: the client (protocol 1) says so instead of timing out.
        context = zmq.Context()
        router = context.socket(zmq.ROUTER)
        port = router.bind_to_random_port("tcp://127.0.0.1")
        stop = threading.Event()

        def answer():
            poller = zmq.Poller()
            poller.register(router, zmq.POLLIN)
            while not stop.is_set():
                if poller.poll(100):
                    identity = router.recv_multipart()[0]
                    refusal = pb.Refusal(code=pb.REFUSAL_CODE_UNSUPPORTED_VERSION,
                                         reason="unsupported wire protocol major version 1 (this peer speaks 2)")
                    router.send_multipart([identity, pb.Envelope(major=2, minor=0, refusal=refusal).SerializeToString()])

        thread = threading.Thread(target=answer)
        thread.start()
        try:
            for run in (lambda c: c.status(), lambda c: c.submit([ROCKET])):
                with Client(f"tcp://127.0.0.1:{port}", timeout=10) as client:
                    with self.assertRaises(ProtocolVersionError) as error:
                        run(client)
                    self.assertIn("speaks wire protocol major version 2, this client speaks major version 1",
                                  str(error.exception))
                    with self.assertRaises(ProtocolVersionError):  # and every later call
                        client.status()
        finally:
            stop.set()
            thread.join()
            router.close(linger=0)
            context.term()


class NoCoordinatorTests(unittest.TestCase):
    def test_no_answer_names_the_endpoint_and_what_to_check(self):
        with socket_port() as port:
            with Client(f"tcp://127.0.0.1:{port}", timeout=1) as client:
                with self.assertRaises(NoAnswerError) as error:
                    client.status()
        self.assertIn(f"no answer to the status request from a coordinator at tcp://127.0.0.1:{port} within 1 s",
                      str(error.exception))


class CoordinatorListTests(ClusterTestCase):
    """A client given ``DEAD,LIVE`` (a pair, docs/failover.md) turns to the live coordinator on no answer."""

    def test_status_comes_from_the_live_coordinator_after_the_dead_one(self):
        with socket_port() as port:
            endpoints = f"tcp://127.0.0.1:{port}, {self.cluster.endpoint}"
            with self.assertLogs("shiftwork_client", level="WARNING") as logs:
                with Client(endpoints, timeout=2) as client:
                    self.assertEqual(client.endpoints, [f"tcp://127.0.0.1:{port}", self.cluster.endpoint])
                    status = client.status()
                    self.assertEqual(client.endpoint, self.cluster.endpoint)
        self.assertEqual(len(status.workers), 1)
        self.assertIn(f"turning to {self.cluster.endpoint}", "\n".join(logs.output))

    def test_the_asyncio_client_turns_likewise(self):
        async def run():
            with socket_port() as port:
                async with AsyncClient(f"tcp://127.0.0.1:{port},{self.cluster.endpoint}", timeout=2) as client:
                    return await client.status()
        self.assertEqual(len(asyncio.run(run()).workers), 1)

    def test_a_bad_entry_is_named(self):
        for endpoints, words in [("tcp://127.0.0.1:1,,tcp://127.0.0.1:2", "empty entry (number 2)"),
                                 ("tcp://127.0.0.1:1,coordinator:5570", "'coordinator:5570' is not a coordinator endpoint")]:
            with self.assertRaises(ValueError) as error:
                Client(endpoints)
            self.assertIn(words, str(error.exception))


class PassiveCoordinatorTests(ClusterTestCase):
    """A client given ``PASSIVE,LIVE`` turns at once when the first refuses its request as the passive one of a
    pair (``REFUSAL_CODE_PASSIVE``): a real ROUTER socket that refuses everything stands in for it."""

    def test_status_comes_from_the_live_coordinator_at_once(self):
        with passive_coordinator() as passive:
            # A timeout no turn on silence fits in: only the refusal can make the client turn in time.
            with self.assertLogs("shiftwork_client", level="WARNING") as logs:
                with Client(f"{passive.endpoint},{self.cluster.endpoint}", timeout=30) as client:
                    status = client.status()
                    self.assertEqual(client.endpoint, self.cluster.endpoint)
            self.assertGreaterEqual(passive.refused, 1)
        self.assertEqual(len(status.workers), 1)
        self.assertIn("passive one of its pair", "\n".join(logs.output))

    def test_the_asyncio_client_turns_likewise(self):
        async def run(endpoint):
            async with AsyncClient(f"{endpoint},{self.cluster.endpoint}", timeout=30) as client:
                return await client.status()
        with passive_coordinator() as passive:
            self.assertEqual(len(asyncio.run(run(passive.endpoint)).workers), 1)
            self.assertGreaterEqual(passive.refused, 1)

    def test_a_list_of_passive_coordinators_only_is_refused_saying_so(self):
        with passive_coordinator() as passive:
            with Client(passive.endpoint, timeout=30) as client:
                with self.assertRaises(RefusedError) as error:
                    client.status()
        self.assertEqual(error.exception.code, "REFUSAL_CODE_PASSIVE")


class passive_coordinator:
    """A ROUTER on a loopback port that answers every request with ``REFUSAL_CODE_PASSIVE``, on a thread of its
    own, stopped (and its socket closed) on exit."""

    def __enter__(self) -> "passive_coordinator":
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.ROUTER)
        self._socket.setsockopt(zmq.LINGER, 0)
        port = self._socket.bind_to_random_port("tcp://127.0.0.1")
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="passive-coordinator", daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        while not self._stop.is_set():
            if not self._socket.poll(50):
                continue
            frames = self._socket.recv_multipart()
            try:
                envelope = pb.Envelope.FromString(frames[-1])
            except Exception:  # not a message of the protocol: nothing to refuse
                continue
            body = envelope.WhichOneof("body")
            request_id = getattr(getattr(envelope, body), "request_id", "") if body else ""
            refusal = pb.Envelope(major=envelope.major, minor=envelope.minor, refusal=pb.Refusal(
                request_id=request_id, code=8, reason="this coordinator is the passive one of its pair"))
            self._socket.send_multipart([frames[0], refusal.SerializeToString()])
            self.refused += 1

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()
        self._socket.close()
        self._context.term()


class socket_port:
    """A loopback port nothing listens on (bound, then released)."""

    def __enter__(self) -> int:
        import socket
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]

    def __exit__(self, *exc_info):
        return False


if __name__ == "__main__":
    unittest.main()
