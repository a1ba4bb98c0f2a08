"""Uploads against a real coordinator and real workers on loopback TCP (tests/cluster.py): local files and
directories travel as bytes, client → coordinator → worker, to workers that may not read local files at all
(started without ``--allow-local-files``); a file that changed or vanished by the time it is asked for fails
its item only, naming it; a client that attaches later (and a retry) send what the coordinator asks again."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import unittest

from cluster import REPOSITORY, LocalCluster
from shiftwork_client import AsyncClient, Client, ItemResult, TiltShift
from test_client import image_size

SAMPLES = os.path.join(REPOSITORY, "samples")
IMAGES = {"rocket.jpg": (640, 427), "chelsea.png": (451, 300), "coffee.jpg": (600, 400), "cameraman.png": (512, 512)}


class UploadTestCase(unittest.TestCase):
    workers = 1
    data_dir = False
    coordinator_options: list = []

    def setUp(self):
        # Workers that read no local file: whatever they filter came as uploaded bytes.
        self.cluster = LocalCluster(workers=self.workers, data_dir=self.data_dir, local_files=False,
                                    coordinator_options=self.coordinator_options)
        self.addCleanup(self.cluster.stop)
        scratch = tempfile.mkdtemp(prefix="shiftwork-upload-test-")
        self.addCleanup(shutil.rmtree, scratch, True)
        self.library = os.path.join(os.path.realpath(scratch), "library")
        self.out = os.path.join(scratch, "out")

    def client(self, **options) -> Client:
        client = Client(self.cluster.endpoint, timeout=options.pop("timeout", 30), **options)
        self.addCleanup(client.close)
        return client

    def photo(self, inside: str, sample: str = "rocket.jpg") -> str:
        path = os.path.join(self.library, inside)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copyfile(os.path.join(SAMPLES, sample), path)
        return path

    def assert_output(self, item: ItemResult, sample: str) -> None:
        self.assertTrue(item.succeeded, f"{item.failure}\n{self.cluster.output()}")
        self.assertEqual(image_size(item.output.data), IMAGES[sample])


class UploadTests(UploadTestCase):
    def test_a_directory_is_uploaded_and_its_tree_kept_in_the_output_names(self):
        self.photo("2024/01/IMG_0001.jpg", "rocket.jpg")
        self.photo("2024/02/IMG_0001.png", "chelsea.png")
        self.photo("my photo.jpg", "coffee.jpg")
        with open(os.path.join(self.library, "notes.txt"), "w") as handle:
            handle.write("not an image")
        client = self.client()
        batch = client.submit([self.library], TiltShift(radius=4))
        self.assertEqual(batch.item_count, 3)
        self.assertEqual(batch.left_out, ())
        self.assertIn("notes.txt", batch.notes[0])
        result = batch.wait(timeout=120)
        self.assertEqual((result.succeeded, result.failed), (3, 0), self.cluster.output())
        self.assertEqual([item.output_name for item in result.items],
                         ["2024/01/IMG_0001", "2024/02/IMG_0001", "my photo"])
        for item, sample in zip(result.items, ["rocket.jpg", "chelsea.png", "coffee.jpg"]):
            self.assert_output(item, sample)
        saved = [item.save(self.out) for item in result.items]
        self.assertEqual(saved[0], os.path.join(self.out, "2024", "01", "IMG_0001.jpg"))
        self.assertEqual(saved[1], os.path.join(self.out, "2024", "02", "IMG_0001.png"))
        self.assertEqual(batch.awaiting_uploads, 0, "the coordinator said it holds every file")
        status = client.status(batch.batch_id).batches[0]
        self.assertEqual([item.source for item in status.items],
                         [os.path.join(self.library, path) for path in ("2024/01/IMG_0001.jpg", "2024/02/IMG_0001.png",
                                                                        "my photo.jpg")])

    def changed_and_gone(self, client: Client):
        """Submits three files, then changes one and removes one before they are asked for: the synchronous
        client reads a file when it is asked for it, while it waits for the batch's events, so nothing is read
        before the first event is asked for. The batch's result, the changed file's path and its `stat`."""
        kept = self.photo("kept.jpg", "rocket.jpg")
        changed = self.photo("changed.png", "chelsea.png")
        gone = self.photo("gone.jpg", "coffee.jpg")
        announced = os.stat(changed)
        batch = client.submit([kept, changed, gone])
        with open(changed, "ab") as handle:
            handle.write(b"more bytes")
        os.remove(gone)
        return batch.wait(timeout=120), changed, gone, announced

    def test_a_file_changed_or_gone_before_it_is_asked_for_fails_its_item_only_naming_it(self):
        result, changed, gone, _ = self.changed_and_gone(self.client())
        self.assertEqual((result.succeeded, result.failed), (1, 2), self.cluster.output())
        self.assert_output(result.items[0], "rocket.jpg")
        for item, path, words in [(result.items[1], changed, "changed since it was submitted (size "),
                                  (result.items[2], gone, "vanished since it was submitted")]:
            self.assertEqual(item.failure.code, "FAILURE_CODE_UPLOAD", item.failure)
            self.assertIn(path, item.failure.message)
            self.assertIn(words, item.failure.message)

    def test_a_retry_asks_for_an_uploaded_file_again(self):
        client = self.client()
        result, changed, _, announced = self.changed_and_gone(client)
        self.assertEqual(result.failed, 2, self.cluster.output())
        # The file as it was announced again (its bytes and modification time): a retry asks for it anew.
        shutil.copyfile(os.path.join(SAMPLES, "chelsea.png"), changed)
        os.utime(changed, ns=(announced.st_atime_ns, announced.st_mtime_ns))
        again = client.retry(result.batch_id, items=[1]).wait(timeout=120)
        self.assertEqual((again.succeeded, again.failed), (2, 1), self.cluster.output())
        self.assert_output(again.items[0], "chelsea.png")

    def test_the_asyncio_client_uploads_without_being_awaited_for_events(self):
        paths = [self.photo("a.jpg", "rocket.jpg"), self.photo("b.png", "cameraman.png")]

        async def scenario():
            async with AsyncClient(self.cluster.endpoint, timeout=30) as client:
                batch = await client.submit(paths, flat=True)
                status = None
                for _ in range(600):  # the files go while this task only asks for status
                    status = (await client.status(batch.batch_id)).batches[0]
                    if status.succeeded + status.failed == 2:
                        break
                    await asyncio.sleep(0.1)
                return status, await batch.wait(60)

        status, result = asyncio.run(scenario())
        self.assertEqual(status.succeeded, 2, self.cluster.output())
        self.assert_output(result.items[0], "rocket.jpg")
        self.assert_output(result.items[1], "cameraman.png")


class SmallWindowTests(UploadTestCase):
    """A window of 1 MiB: the coordinator asks for a few files at a time, in several requests."""
    coordinator_options = ["--upload-window-mb", "1"]
    workers = 2

    def test_many_files_through_a_small_window_all_arrive(self):
        samples = sorted(IMAGES) * 3  # 12 files, about 1.6 MiB
        paths = [self.photo(f"{index:02d}-{sample}", sample) for index, sample in enumerate(samples)]
        result = self.client().submit(paths).wait(timeout=300)
        self.assertEqual((result.succeeded, result.failed), (12, 0), self.cluster.output())
        for item, sample in zip(result.items, samples):
            self.assert_output(item, sample)


class AttachTests(UploadTestCase):
    data_dir = True

    def test_a_client_that_attaches_sends_what_the_first_one_did_not(self):
        paths = [self.photo("2024/a.jpg", "rocket.jpg"), self.photo("2024/b.png", "chelsea.png")]
        first = self.client()
        batch = first.submit(paths)
        first.close()  # gone before it was asked for anything: the items wait for a client
        waiting = self.client().status(batch.batch_id).batches[0]
        self.assertEqual((waiting.succeeded, waiting.failed), (0, 0))
        self.assertEqual([item.state for item in waiting.items], ["awaiting upload"] * 2)

        # Another client on this machine: the batch's own files (its absolute sources) are sent when asked.
        result = self.client().results(batch.batch_id).wait(timeout=120)
        self.assertEqual((result.succeeded, result.failed), (2, 0), self.cluster.output())
        self.assert_output(result.items[0], "rocket.jpg")
        self.assert_output(result.items[1], "chelsea.png")

    def test_a_client_that_attaches_sends_a_changed_file_as_a_failure_naming_it(self):
        kept = self.photo("kept.jpg", "rocket.jpg")
        changed = self.photo("changed.png", "chelsea.png")
        first = self.client()
        batch = first.submit([kept, changed])
        first.close()
        os.utime(changed, ns=(0, os.stat(changed).st_mtime_ns + 1_000_000))  # touched: no longer what was announced
        result = self.client().results(batch.batch_id, uploads=[self.library]).wait(timeout=120)
        self.assertEqual((result.succeeded, result.failed), (1, 1), self.cluster.output())
        self.assert_output(result.items[0], "rocket.jpg")
        self.assertEqual(result.items[1].failure.code, "FAILURE_CODE_UPLOAD")
        self.assertEqual(result.items[1].failure.message, f"{changed} changed since it was submitted (modified since)")


if __name__ == "__main__":
    unittest.main()
