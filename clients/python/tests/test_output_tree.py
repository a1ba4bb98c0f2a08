"""`ItemResult.save` keeps a library's folders (an output name is a relative path, as `shiftwork submit DIR`
names them) and never writes outside the directory it is given."""

from __future__ import annotations

import os
import tempfile
import unittest

from shiftwork_client import ItemResult, Output


class OutputTreeTests(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.scratch.name, "out")

    def tearDown(self):
        self.scratch.cleanup()

    def item(self, name: str, index: int = 0) -> ItemResult:
        return ItemResult("b-1", index, name, f"/photos/{name}.jpg", Output(b"\xff\xd8\xff", "image/jpeg", 1, 1))

    def test_a_relative_output_name_keeps_its_folders_and_its_characters(self):
        path = self.item("2024/01/my photo #1 (copy) é").save(self.out)
        self.assertEqual(path, os.path.join(self.out, "2024", "01", "my photo #1 (copy) é.jpg"))
        with open(path, "rb") as file:
            self.assertEqual(file.read(), b"\xff\xd8\xff")
        again = self.item("2024/01/my photo #1 (copy) é", 1).save(self.out)
        self.assertEqual(again, os.path.join(self.out, "2024", "01", "my photo #1 (copy) é-2.jpg"))

    def test_a_name_that_would_leave_the_directory_is_refused_and_nothing_is_written(self):
        for hostile in ["../x", "a/../../x", "/etc/x", "a\x00b", "x" * 10_000, ".hidden", "a//b"]:
            with self.assertRaises(ValueError, msg=repr(hostile[:20])):
                self.item(hostile).save(self.out)
        written = [os.path.join(root, name) for root, _, names in os.walk(self.scratch.name) for name in names]
        self.assertEqual(written, [])

    def test_a_folder_that_is_a_symbolic_link_is_not_followed(self):
        outside = os.path.join(self.scratch.name, "outside")
        os.makedirs(outside)
        os.makedirs(self.out)
        os.symlink(outside, os.path.join(self.out, "2024"))
        with self.assertRaises(ValueError) as raised:
            self.item("2024/x").save(self.out)
        self.assertIn("symbolic link", str(raised.exception))
        self.assertEqual(os.listdir(outside), [])


if __name__ == "__main__":
    unittest.main()
