"""`printable` escapes what could forge a line or steer a terminal, as Swift's `PrintableText` does, and
nothing else."""

from __future__ import annotations

import unittest

from shiftwork_client import printable


class PrintableTests(unittest.TestCase):
    def test_controls_and_bidirectional_overrides_are_escaped_and_letters_kept(self):
        self.assertEqual(printable("a\nb\rc\td"), "a\\nb\\rc\\td")
        self.assertEqual(printable("\x1b[2Jx\x00\x7f\x9b"), "\\u{1B}[2Jx\\u{0}\\u{7F}\\u{9B}")
        self.assertEqual(printable("evil\u202egpj.exe \u2066x\u2069 \u2028"), "evil\\u{202E}gpj.exe \\u{2066}x\\u{2069} \\u{2028}")
        for kept in ("café/Ünïcode name.png", "photo #1 (copy).jpg", "日本語", ""):
            self.assertEqual(printable(kept), kept)


if __name__ == "__main__":
    unittest.main()
