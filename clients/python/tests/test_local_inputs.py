"""`submit()`'s sources made ready as ``shiftwork submit`` makes them: directories expanded into their images
(recursive, sorted by bytes, by signature, hidden entries passed over, a link loop walked once), output names
that keep the library's tree (the cases of Tests/ClusterTests/Units/OutputTreeNamingTests.swift, so that both
clients name alike) or flat ones, local files announced as uploads or sent as shared-disk paths."""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest

from shiftwork_client.local_inputs import local_path, prepare
from shiftwork_client.naming import output_names, output_path_problem

SAMPLES = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "samples"))
JPEG = os.path.join(SAMPLES, "rocket.jpg")
PNG = os.path.join(SAMPLES, "chelsea.png")


class TreeNamingTests(unittest.TestCase):
    """The Swift CLI's cases (`OutputTreeNamingTests`), name for name."""

    def test_a_directory_input_keeps_its_folders_and_its_names_characters(self):
        inputs = ["/p/2024/01/IMG_0001.HEIC", "/p/2024/02/IMG_0001.HEIC", "/p/my photo #1 (copy).jpg",
                  "/p/café/Ünïcode name.png", "https://example.org/a/street%20view.jpg", "/elsewhere/x.jpg"]
        inside = ["2024/01/IMG_0001.HEIC", "2024/02/IMG_0001.HEIC", "my photo #1 (copy).jpg",
                  "café/Ünïcode name.png", None, None]
        self.assertEqual(output_names(inputs, inside), ["2024/01/IMG_0001", "2024/02/IMG_0001", "my photo #1 (copy)",
                                                        "café/Ünïcode name", "street view", "x"])

    def test_repeated_names_are_resolved_in_input_order(self):
        inputs = ["/p/a/x.jpg", "/p/a/x.png", "/p/A/X.jpg", "/q/x.jpg", "/r/x.jpg"]
        inside = ["a/x.jpg", "a/x.png", "A/X.jpg", None, None]
        self.assertEqual(output_names(inputs, inside), ["a/x", "a/x-2", "A/X-3", "x", "x-2"])

    def test_flat_is_the_last_component_made_safe(self):
        inputs = ["/p/a/x.jpg", "/p/b/c/x.jpg", "/p/my photo #1 (copy).jpg"]
        inside = ["a/x.jpg", "b/c/x.jpg", "my photo #1 (copy).jpg"]
        self.assertEqual(output_names(inputs, inside, flat=True), ["x", "x-2", "my_photo__1__copy_"])
        self.assertEqual(output_names(["https://x.org/a/street.jpg", "/p/Street.png", "file:///q/caf%C3%A9.jpg"],
                                      flat=True), ["street", "Street-2", "caf_"])

    def test_what_no_file_system_takes_or_what_would_escape_is_replaced(self):
        inputs = ["https://x.org/..%2F..%2Fetc%2Fpasswd", "/p/.hidden.jpg", "/p/nul", "/p/x", "https://x.org/"]
        inside = [None, None, "a\x00b/c\x01d.jpg", "../../x.jpg", None]
        names = output_names(inputs, inside)
        self.assertEqual(names[1:], ["_hidden", "a_b/c_d", "_./_./x", "x"])
        self.assertNotIn("/", names[0])
        for name in names:
            self.assertIsNone(output_path_problem(name), name)

    def test_a_long_path_keeps_its_last_component_and_a_component_is_cut(self):
        deep = "/".join(f"f{index}" for index in range(40)) + "/photo.jpg"
        names = output_names(["/p/1", "/p/2"], [deep, "é" * 300 + ".jpg"])
        self.assertEqual(names[0], "photo")
        self.assertEqual(len(names[1].encode()), 200 - 20)
        for name in names:
            self.assertIsNone(output_path_problem(name), name)


class DirectoryTests(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.root = os.path.join(os.path.realpath(scratch.name), "library")
        for inside, source in [("2024/01/IMG_0001.jpg", JPEG), ("2024/02/IMG_0001.jpg", JPEG), ("b photo", PNG),
                               ("A.png", PNG), (".hidden/x.jpg", JPEG), (".x.jpg", JPEG)]:
            os.makedirs(os.path.dirname(os.path.join(self.root, inside)), exist_ok=True)
            shutil.copyfile(source, os.path.join(self.root, inside))
        with open(os.path.join(self.root, "2024", "notes.jpg"), "w") as handle:
            handle.write("not an image, whatever its name")
        os.symlink(self.root, os.path.join(self.root, "2024", "loop"))

    def test_a_directory_becomes_its_images_in_walk_order_with_their_tree(self):
        inputs = prepare([self.root, "https://example.org/x.jpg"])
        inside = ["2024/01/IMG_0001.jpg", "2024/02/IMG_0001.jpg", "A.png", "b photo"]
        self.assertEqual(inputs.sources, tuple(os.path.join(self.root, path) for path in inside)
                         + ("https://example.org/x.jpg",))
        self.assertEqual(inputs.output_names, ("2024/01/IMG_0001", "2024/02/IMG_0001", "A", "b photo", "x"))
        self.assertEqual(inputs.upload_paths, inputs.sources[:4])
        self.assertEqual(inputs.uploads[0].size, os.path.getsize(JPEG))
        self.assertEqual(len(inputs.notes), 1, inputs.notes)
        self.assertIn("skipped 1 file that is not an image", inputs.notes[0])
        self.assertIn("2024/notes.jpg", inputs.notes[0])

    def test_flat_names_and_shared_disk_paths(self):
        inputs = prepare([self.root], upload=False, flat=True)
        self.assertEqual(inputs.output_names, ("IMG_0001", "IMG_0001-2", "A", "b_photo"))
        self.assertEqual(inputs.upload_paths, ())
        self.assertTrue(all(os.path.isabs(source) for source in inputs.sources))

    def test_relative_paths_and_file_urls_are_made_absolute(self):
        previous = os.getcwd()
        os.chdir(self.root)
        self.addCleanup(os.chdir, previous)
        self.assertEqual(local_path("A.png"), os.path.join(self.root, "A.png"))
        self.assertEqual(local_path("file://" + self.root.replace(" ", "%20") + "/b%20photo"),
                         os.path.join(self.root, "b photo"))
        self.assertIsNone(local_path("https://example.org/A.png"))
        inputs = prepare(["A.png", "file://" + os.path.join(self.root, "2024", "02")])
        self.assertEqual(inputs.sources, (os.path.join(self.root, "A.png"),
                                          os.path.join(self.root, "2024/02/IMG_0001.jpg")))
        self.assertEqual(inputs.output_names, ("A", "IMG_0001"))
        self.assertEqual(inputs.upload_paths, inputs.sources)

    def test_a_directory_without_images_is_said_and_nothing_at_all_is_an_error(self):
        empty = os.path.join(self.root, "empty")
        os.makedirs(empty)
        inputs = prepare([empty, JPEG])
        self.assertEqual(inputs.sources, (JPEG,))
        self.assertIn(f"'{empty}' holds no image file", inputs.notes[-1])
        with self.assertRaises(ValueError) as nothing:
            prepare([empty])
        self.assertIn("no images to send", str(nothing.exception))
        with self.assertRaises(ValueError):
            prepare(JPEG)


class LocalListTests(unittest.TestCase):
    """A list of images on this disk is read by the client, as `shiftwork submit` reads it (LocalManifestTests)."""

    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.root = os.path.realpath(scratch.name)
        os.makedirs(os.path.join(self.root, "trip"))
        for inside in ["a.jpg", "trip/b.jpg", "trip/c.jpg"]:
            shutil.copyfile(JPEG, os.path.join(self.root, inside))

    def write(self, inside: str, text: str) -> str:
        path = os.path.join(self.root, inside)
        with open(path, "w") as handle:
            handle.write(text)
        return path

    def test_a_list_becomes_its_entries_uploaded_with_their_folders_and_urls_left_to_the_workers(self):
        self.write("trip/more.list", "c.jpg\n")
        picked = self.write("picked.txt", "# for the album\r\na.jpg\r\ntrip/b.jpg\n\ntrip/more.list\n"
                                          "https://example.org/d.jpg\n")
        inputs = prepare([picked])
        self.assertEqual(inputs.sources, tuple(os.path.join(self.root, p) for p in ["a.jpg", "trip/b.jpg", "trip/c.jpg"])
                         + ("https://example.org/d.jpg",))
        self.assertEqual(inputs.output_names, ("a", "trip/b", "trip/c", "d"))
        self.assertEqual(inputs.upload_paths, inputs.sources[:3])
        # On a shared disk a worker reads the list, and the batch grows by it while it runs.
        self.assertEqual(prepare([picked], upload=False).sources, (picked,))

    def test_a_list_that_is_not_one_names_the_line_and_too_deep_a_nesting_is_said(self):
        notes = self.write("notes.txt", "a.jpg\nremember to call Anna\n")
        with self.assertRaises(ValueError) as refused:
            prepare([notes])
        self.assertIn("is not a list of images: line 2 (remember to call Anna)", str(refused.exception))
        self.write("d2.txt", "d3.txt\n")
        self.write("d3.txt", "a.jpg\n")
        with self.assertRaises(ValueError) as deep:
            prepare([self.write("d1.txt", "d2.txt\n")])
        self.assertIn("nested deeper than 2 levels", str(deep.exception))


if __name__ == "__main__":
    unittest.main()
