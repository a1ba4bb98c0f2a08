"""The Python client's protobuf module reads and writes the golden wire bytes (Tests/WireGolden) as protoc
wrote them, and as the Swift codec must (WireTests' GoldenBytesTests): one set of bytes, three codecs."""

from __future__ import annotations

import pathlib
import unittest

from google.protobuf import text_format

from shiftwork_client._proto.shiftwork.v1 import shiftwork_pb2 as pb
from shiftwork_client.session import MAJOR

GOLDEN = pathlib.Path(__file__).resolve().parents[3] / "Tests" / "WireGolden" / "envelope"


class GoldenWireTests(unittest.TestCase):
    def test_every_golden_envelope_parses_to_its_text_and_serialises_back_to_the_same_bytes(self):
        names = sorted(path.stem for path in GOLDEN.glob("*.bin"))
        self.assertGreaterEqual(len(names), 25, f"golden envelopes missing under {GOLDEN}")
        bodies = set()
        for name in names:
            with self.subTest(name):
                golden = (GOLDEN / f"{name}.bin").read_bytes()
                expected = text_format.Parse((GOLDEN / f"{name}.txtpb").read_text(encoding="utf-8"), pb.Envelope())
                decoded = pb.Envelope.FromString(golden)
                self.assertEqual(decoded, expected)
                self.assertEqual(decoded.major, MAJOR)
                self.assertEqual(decoded.SerializeToString(deterministic=True), golden)
                bodies.add(decoded.WhichOneof("body"))
        every_body = {field.name for field in pb.Envelope.DESCRIPTOR.oneofs_by_name["body"].fields}
        self.assertEqual(bodies, every_body, "a golden envelope for every body")


if __name__ == "__main__":
    unittest.main()
