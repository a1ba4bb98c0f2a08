"""Uploads without sockets (docs/protocol.md, "Uploads"): what a local file is announced as, the bytes sent
when the coordinator asks and the checks before and after reading them, CRC-32C, which files the client
agrees to send, and the wire messages it builds and reads, every field of them."""

from __future__ import annotations

import os
import tempfile
import unittest

from google.protobuf.descriptor import FieldDescriptor

from shiftwork_client import UPLOAD_LIMIT_BYTES, TiltShift, UploadMetadata, UploadRequest, UploadWanted
from shiftwork_client._proto.shiftwork.v1 import shiftwork_pb2 as pb
from shiftwork_client.local_inputs import prepare
from shiftwork_client.local_upload import UploadRefused, announce, crc32c, read
from shiftwork_client.session import MAJOR, MINOR, Session, UploadsAsked
from shiftwork_client.upload_queue import UploadQueue


def envelope(**body) -> list:
    return [pb.Envelope(major=MAJOR, minor=MINOR, **body).SerializeToString()]


class FileTestCase(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.dir = os.path.realpath(scratch.name)

    def file(self, name: str, data: bytes) -> str:
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def wanted(self, path: str, index: int = 0) -> UploadWanted:
        return UploadWanted(index, path, announce(path))


class ChecksumTests(unittest.TestCase):
    def test_crc32c_is_castagnolis(self):
        # The check value of CRC-32C (RFC 3720, and the coordinator's checksum.c).
        self.assertEqual(crc32c(b"123456789"), 0xE3069283)
        self.assertEqual(crc32c(b""), 0)
        self.assertEqual(crc32c(bytes(32)), 0x8A9136AA)


class AnnounceTests(FileTestCase):
    def test_a_file_is_announced_by_its_size_and_modification_time(self):
        path = self.file("a.jpg", b"\xff\xd8\xff" + bytes(100))
        os.utime(path, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
        self.assertEqual(announce(path), UploadMetadata(103, 1_700_000_000_123_456_789))

    def test_an_empty_a_missing_and_a_too_large_file_are_refused_naming_them(self):
        with self.assertRaises(UploadRefused) as empty:
            announce(self.file("empty.jpg", b""))
        self.assertIn("empty.jpg is empty", str(empty.exception))
        with self.assertRaises(UploadRefused) as missing:
            announce(os.path.join(self.dir, "missing.jpg"))
        self.assertIn("missing.jpg", str(missing.exception))
        self.assertIn("No such file", str(missing.exception))
        big = os.path.join(self.dir, "big.jpg")
        with open(big, "wb") as handle:  # sparse: 120 MiB that take no disk
            handle.truncate(120 * 1024 * 1024)
        with self.assertRaises(UploadRefused) as large:
            announce(big)
        self.assertIn("big.jpg is 120 MiB, more than the 100 MiB a worker accepts", str(large.exception))
        with self.assertRaises(UploadRefused) as directory:
            announce(self.dir)
        self.assertIn("not a regular file", str(directory.exception))

    def test_submit_leaves_out_what_cannot_be_uploaded_and_keeps_the_rest(self):
        good = self.file("good.jpg", b"\xff\xd8\xff\x00")
        big = os.path.join(self.dir, "big.jpg")
        with open(big, "wb") as handle:
            handle.truncate(UPLOAD_LIMIT_BYTES + 1)
        missing = os.path.join(self.dir, "missing.jpg")
        inputs = prepare([big, good, missing, "https://example.org/x.jpg"])
        self.assertEqual(inputs.sources, (good, "https://example.org/x.jpg"))
        self.assertEqual(inputs.upload_paths, (good,))
        self.assertEqual([item.source for item in inputs.left_out], [big, missing])
        self.assertIn("more than the 100 MiB a worker accepts", inputs.left_out[0].reason)
        with self.assertRaises(ValueError) as nothing:
            prepare([big, missing])
        self.assertIn("no images to send", str(nothing.exception))
        self.assertIn("big.jpg is 100 MiB", str(nothing.exception))


class ReadTests(FileTestCase):
    def test_an_unchanged_file_is_sent_whole_with_its_checksum(self):
        data = os.urandom(300_000)
        path = self.file("a.jpg", data)
        answer = read(self.wanted(path, 7))
        self.assertEqual((answer.item_index, answer.data, answer.crc32c, answer.failure), (7, data, crc32c(data), ""))

    def test_a_changed_file_is_not_sent_and_the_failure_names_it_and_the_change(self):
        path = self.file("a.jpg", b"12345")
        wanted = self.wanted(path)
        with open(path, "ab") as handle:
            handle.write(b"678")
        answer = read(wanted)
        self.assertEqual(answer.data, b"")
        self.assertEqual(answer.failure, f"{path} changed since it was submitted (size 5 then, 8 now)")

        touched = self.file("b.jpg", b"12345")
        wanted = self.wanted(touched)
        os.utime(touched, ns=(wanted.expected.modified_unix_ns + 1, wanted.expected.modified_unix_ns + 1))
        self.assertEqual(read(wanted).failure, f"{touched} changed since it was submitted (modified since)")

    def test_a_vanished_file_fails_naming_it(self):
        path = self.file("gone.jpg", b"12345")
        wanted = self.wanted(path)
        os.remove(path)
        answer = read(wanted)
        self.assertTrue(answer.failure.startswith(f"{path} vanished since it was submitted"), answer.failure)

    def test_a_size_outside_the_limit_is_never_read(self):
        path = self.file("a.jpg", b"12345")
        for size in (0, UPLOAD_LIMIT_BYTES + 1):
            answer = read(UploadWanted(0, path, UploadMetadata(size, 0)))
            self.assertIn("outside 1...", answer.failure)
            self.assertEqual(answer.data, b"")


class UploadQueueTests(unittest.TestCase):
    def request(self, *paths: str, batch_id: str = "b-1") -> UploadRequest:
        items = tuple(UploadWanted(index, path, UploadMetadata(1, 0)) for index, path in enumerate(paths))
        return UploadRequest(batch_id, items, len(items), 5, True)

    def test_only_announced_files_are_queued_in_order_and_once(self):
        queue = UploadQueue()
        queue.allow(["/p/a.jpg", "/p/b.jpg"])
        queue.asked(self.request("/p/a.jpg", "/etc/shadow", "/p/b.jpg", "/p/../etc/shadow", "p/a.jpg"))
        queue.asked(self.request("/p/a.jpg"))  # asked again before it was sent
        self.assertEqual(queue.refused, 3)
        self.assertEqual(queue.next()[1].path, "/p/a.jpg")
        self.assertEqual(queue.next()[1].path, "/p/b.jpg")
        self.assertIsNone(queue.next())
        self.assertEqual((queue.awaiting["b-1"], queue.spooled["b-1"]), (5, True))

    def test_files_under_an_allowed_directory_are_sent_for_a_batch_attached_to(self):
        queue = UploadQueue()
        queue.allow_under(["/photos/2024"])
        queue.asked(self.request("/photos/2024/01/a.jpg", "/photos/2024-other/b.jpg", "/photos/a.jpg"))
        self.assertEqual(queue.next()[1].path, "/photos/2024/01/a.jpg")
        self.assertIsNone(queue.next())
        self.assertEqual(queue.refused, 2)


class WireTests(FileTestCase):
    def test_a_submission_announces_its_local_files_and_nothing_else(self):
        image = self.file("a.jpg", b"\xff\xd8\xff\x00")
        inputs = prepare([image, "https://example.org/b.jpg"])
        _, data = Session().submit(inputs, TiltShift())
        items = pb.Envelope.FromString(data).submit_batch.items
        self.assertEqual([item.source for item in items], [image, "https://example.org/b.jpg"])
        self.assertTrue(items[0].HasField("upload"))
        self.assertEqual((items[0].upload.size, items[0].upload.modified_unix_ns),
                         (4, os.stat(image).st_mtime_ns))
        self.assertFalse(items[1].HasField("upload"))
        shared = pb.Envelope.FromString(Session().submit(prepare([image], upload=False), TiltShift())[1])
        self.assertFalse(shared.submit_batch.items[0].HasField("upload"), "shared disk: the path, no upload")
        self.assertEqual(shared.submit_batch.items[0].source, image)

    def test_upload_data_sets_every_field_of_the_message(self):
        """Every field of `UploadData` (as proto/ says today) is set by the client in one of its two forms."""
        session = Session()
        sent = pb.Envelope.FromString(session.upload_data("b-1", 3, b"bytes", crc32c(b"bytes"))).upload_data
        failed = pb.Envelope.FromString(session.upload_data("b-1", 4, failure="gone")).upload_data
        for field in pb.UploadData.DESCRIPTOR.fields:
            with self.subTest(field=field.name):
                default = field.default_value if field.type != FieldDescriptor.TYPE_BYTES else b""
                self.assertTrue(getattr(sent, field.name) != default or getattr(failed, field.name) != default,
                                f"UploadData.{field.name} is never set by the client")
        self.assertEqual((sent.batch_id, sent.item_index, sent.data, sent.crc32c, sent.failure),
                         ("b-1", 3, b"bytes", crc32c(b"bytes"), ""))
        self.assertEqual((failed.item_index, failed.data, failed.failure), (4, b"", "gone"))

    def test_an_upload_request_is_delivered_with_every_field_and_an_index_out_of_bounds_is_dropped(self):
        session = Session()
        request = pb.UploadRequest(batch_id="b-1", credit_bytes=10, awaiting_items=3, spooled=True, items=[
            pb.UploadWanted(item_index=2, path="/p/a.jpg", expected=pb.UploadMetadata(size=10, modified_unix_ns=-5))])
        deliveries = session.receive(envelope(upload_request=request))
        self.assertEqual(deliveries, [UploadsAsked(UploadRequest(
            "b-1", (UploadWanted(2, "/p/a.jpg", UploadMetadata(10, -5)),), 10, 3, True))])
        request.items[0].item_index = 10_000_000
        self.assertEqual(session.receive(envelope(upload_request=request)), [])
        self.assertEqual(session.dropped_messages, 1)


if __name__ == "__main__":
    unittest.main()
