"""The submission's options against a real coordinator and real workers (tests/cluster.py), with images
from a real HTTP origin on 127.0.0.1 that fails or stalls as told: retries, deadline, idempotency key,
priority, a directory sink, and the output's format, quality, colour and metadata. Attempts and outcomes are
checked, never durations."""

from __future__ import annotations

import asyncio
import http.server
import os
import threading
import unittest
from typing import Dict

from shiftwork_client import AsyncClient, BatchFinished, TiltShift
from test_client import ROCKET, ClusterTestCase


class Origin:
    """An HTTP server on 127.0.0.1 in a thread: ``/rocket.jpg`` serves the sample, ``/busy.jpg`` answers 503
    (transient), ``/stall.jpg`` sends nothing until `stop()`. Counts the requests of each path."""

    def __init__(self):
        self.requests: Dict[str, int] = {}
        self._stopping = threading.Event()
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                origin.requests[self.path] = origin.requests.get(self.path, 0) + 1
                if self.path == "/stall.jpg":
                    origin._stopping.wait(120)
                    return
                if self.path == "/busy.jpg":
                    self.send_error(503, "busy")
                    return
                with open(ROCKET, "rb") as file:
                    body = file.read()
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def stop(self) -> None:
        self._stopping.set()
        self.server.shutdown()
        self.server.server_close()


class SubmitOptionsClusterTests(ClusterTestCase):
    workers = 2

    def setUp(self):
        super().setUp()
        self.origin = Origin()
        self.addCleanup(self.origin.stop)

    def test_retries_bound_the_attempts_of_a_transient_failure(self):
        client = self.client()
        once = client.submit([self.origin.url("/busy.jpg")], retries=0).wait(timeout=120)
        self.assertEqual((once.succeeded, once.failed), (0, 1), self.cluster.output())
        self.assertEqual(self.origin.requests.get("/busy.jpg"), 1, "retries=0: one attempt")
        self.assertIn("503", once.items[0].failure.message)
        twice = client.submit([self.origin.url("/busy.jpg")], retries=1, priority="low").wait(timeout=120)
        self.assertEqual(twice.failed, 1)
        self.assertEqual(self.origin.requests.get("/busy.jpg"), 1 + 2, "retries=1: two attempts")

    def test_a_deadline_cancels_what_has_not_finished(self):
        result = self.client().submit([self.origin.url("/rocket.jpg"), self.origin.url("/stall.jpg")],
                                      deadline=5).wait(timeout=120)
        self.assertTrue(result.items[0].succeeded, result.items[0].failure)
        stalled = result.items[1].failure
        self.assertTrue(stalled is not None and stalled.cancelled, stalled)
        self.assertIn("deadline of 5 s passed", stalled.message)
        self.assertEqual((result.succeeded, result.cancelled), (1, 1))

    def test_a_directory_sink_gets_the_outputs_in_the_format_asked_for(self):
        sink = os.path.join(self.out, "sink")
        os.makedirs(sink)
        result = self.client().submit([ROCKET], TiltShift(radius=4, output_format="webp", quality=60, colour="srgb",
                                                          metadata="strip"), sink=sink).wait(timeout=120)
        self.assertTrue(result.all_succeeded, [item.failure for item in result.items])
        output = result.items[0].output
        self.assertTrue(output.in_sink)
        self.assertEqual(output.data, b"", "the image stays in the sink")
        self.assertEqual(output.media_type, "image/webp")
        self.assertEqual(os.path.dirname(output.location), sink)
        with open(output.location, "rb") as file:
            written = file.read()
        self.assertEqual(len(written), output.size)
        self.assertTrue(written.startswith(b"RIFF") and written[8:12] == b"WEBP", written[:16])
        with self.assertRaises(ValueError):
            result.items[0].save(self.out)

    def test_an_option_out_of_range_is_refused_before_anything_is_sent(self):
        with self.assertRaises(ValueError) as raised:
            self.client().submit([ROCKET], retries=11)
        self.assertIn("retries must be between 0 and 10 (got 11)", str(raised.exception))
        self.assertEqual(self.client().status().batches, ())


class IdempotencyKeyTests(ClusterTestCase):
    data_dir = True  # an attached client gets the finished items again: the coordinator keeps them

    def test_the_same_idempotency_key_attaches_to_the_batch_it_made(self):
        async def run():
            async with AsyncClient(self.cluster.endpoint, timeout=30) as client:
                first = await client.submit([ROCKET], idempotency_key="py-client:test@1", priority=10)
                self.assertFalse(first.attached)
                await first.wait(timeout=120)
                again = await client.submit([ROCKET], idempotency_key="py-client:test@1", priority=10)
                self.assertTrue(again.attached)
                self.assertEqual(again.batch_id, first.batch_id)
                events = [event async for event in again.events(timeout=120)]
                other = await client.submit([ROCKET], idempotency_key="py-client:test@2")
                await other.wait(timeout=120)
                return first, events, other
        first, events, other = asyncio.run(run())
        self.assertEqual(events[-1], BatchFinished(first.batch_id, 1, 0, 0), "the attached stream repeats the item")
        self.assertNotEqual(other.batch_id, first.batch_id, "another key makes another batch")
        self.assertFalse(other.attached)


if __name__ == "__main__":
    unittest.main()
