"""The submission's options and the filter's settings on the wire, and the checks that refuse a value out
of range before anything is sent (the ranges of `shiftwork submit`), without sockets."""

from __future__ import annotations

import os
import unittest

from shiftwork_client import ItemResult, Output, SubmitOptions, TiltShift
from shiftwork_client._proto.shiftwork.v1 import shiftwork_pb2 as pb
from shiftwork_client.session import Session


def sent(parameters: TiltShift = TiltShift(), **options) -> "pb.SubmitBatch":
    """The `SubmitBatch` a session sends for one source with these settings."""
    _, data = Session().submit(["a.jpg"], parameters, options=SubmitOptions(**options))
    return pb.Envelope.FromString(data).submit_batch


class SubmitOptionsTests(unittest.TestCase):
    def test_every_option_reaches_the_wire(self):
        submit = sent(priority="high", idempotency_key="nightly-2026-11-23:run@1", retries=0, deadline=3600,
                      sink="s3://photos-out/2026/", s3_endpoint="http://127.0.0.1:9000")
        self.assertEqual(submit.priority, 5)
        self.assertEqual(submit.idempotency_key, "nightly-2026-11-23:run@1")
        self.assertEqual(submit.WhichOneof("retry_limit"), "retries", "retries=0 must be sent, not left out")
        self.assertEqual(submit.retries, 0)
        self.assertEqual(submit.deadline_seconds, 3600)
        self.assertEqual(submit.sink, "s3://photos-out/2026/")
        self.assertEqual(submit.s3_endpoint, "http://127.0.0.1:9000")
        self.assertEqual(sent(priority=-10).priority, -10)
        self.assertEqual(sent(priority=" Low ").priority, -5)
        self.assertEqual(sent(priority="7").priority, 7)

    def test_unset_options_leave_the_coordinators_defaults(self):
        submit = sent()
        self.assertIsNone(submit.WhichOneof("retry_limit"), "no retries: the coordinator's default")
        self.assertEqual((submit.priority, submit.idempotency_key, submit.deadline_seconds, submit.sink, submit.s3_endpoint),
                         (0, "", 0, "", ""))
        self.assertEqual(sent(deadline=0).deadline_seconds, 0)

    def test_a_relative_sink_directory_is_made_absolute_and_file_urls_kept(self):
        self.assertEqual(sent(sink="out/shared ").sink, os.path.join(os.getcwd(), "out", "shared"))
        self.assertEqual(sent(sink="/srv/shared").sink, "/srv/shared")
        self.assertEqual(sent(sink="file:///srv/shared").sink, "file:///srv/shared")

    def test_values_out_of_range_are_refused_saying_what_to_give(self):
        cases = [
            (dict(priority=11), "priority 11 is out of range: give -10...10"),
            (dict(priority=-11), "priority -11 is out of range"),
            (dict(priority="urgent"), "'urgent' is not a priority: give a number -10...10"),
            (dict(priority=True), "priority must be a number"),
            (dict(retries=11), "retries must be between 0 and 10 (got 11)"),
            (dict(retries=-1), "retries must be between 0 and 10 (got -1)"),
            (dict(retries=1.5), "retries must be a whole number"),
            (dict(deadline=2_592_001), "deadline must be between 1 and 2592000 seconds"),
            (dict(deadline=-5), "deadline must be between 1 and 2592000 seconds (got -5)"),
            (dict(idempotency_key=""), "the idempotency key is empty"),
            (dict(idempotency_key="x" * 129), "more than 128: use a shorter one"),
            (dict(idempotency_key="a b"), "holds ' ', which keys may not"),
            (dict(idempotency_key="caf\u00e9"), "which keys may not"),
            (dict(sink=" "), "sink is empty"),
            (dict(sink="s3://Photos/out"), "'Photos' is not a valid bucket name"),
            (dict(sink="s3://ab"), "'ab' is not a valid bucket name"),
            (dict(sink="https://example.org/out"), "give a directory (a path every worker reaches) or s3://BUCKET/PREFIX"),
            (dict(s3_endpoint="minio:9000"), "is not an http(s) URL"),
        ]
        for options, message in cases:
            with self.subTest(options=options), self.assertRaises(ValueError) as raised:
                sent(**options)
            self.assertIn(message, str(raised.exception))


class ImagingParametersTests(unittest.TestCase):
    def test_format_quality_colour_and_metadata_reach_the_wire(self):
        parameters = sent(TiltShift(output_format="webp", quality=70, colour="srgb", metadata="strip")).parameters
        self.assertEqual(parameters.output_format, pb.IMAGE_FORMAT_WEBP)
        self.assertEqual((parameters.jpeg_quality, parameters.webp_quality, parameters.avif_quality), (70, 70, 70))
        self.assertTrue(parameters.colour_srgb)
        self.assertTrue(parameters.strip_metadata)
        self.assertEqual(sent(TiltShift(output_format="AVIF")).parameters.output_format, pb.IMAGE_FORMAT_AVIF)
        self.assertEqual(sent(TiltShift(output_format="tiff")).parameters.output_format, pb.IMAGE_FORMAT_TIFF)

    def test_angle_and_falloff_reach_the_wire(self):
        parameters = sent(TiltShift(angle=-30, falloff="Progressive")).parameters
        self.assertEqual(parameters.angle, -30)
        self.assertEqual(parameters.falloff, pb.FALLOFF_PROGRESSIVE)
        defaults = sent().parameters
        self.assertEqual((defaults.angle, defaults.falloff), (0, pb.FALLOFF_BLEND))

    def test_the_defaults_keep_colours_and_metadata_and_each_formats_default_quality(self):
        parameters = sent().parameters
        self.assertEqual(parameters.output_format, pb.IMAGE_FORMAT_SAME_AS_INPUT)
        self.assertEqual((parameters.jpeg_quality, parameters.webp_quality, parameters.avif_quality), (90, 0, 0))
        self.assertFalse(parameters.colour_srgb or parameters.strip_metadata)

    def test_settings_out_of_range_are_refused_saying_what_to_give(self):
        cases = [
            (TiltShift(focus=1.5), "focus must be between 0 and 1 (got 1.5)"),
            (TiltShift(band=-0.1), "band must be between 0 and 1"),
            (TiltShift(transition=float("nan")), "transition must be between 0 and 1"),
            (TiltShift(radius=0.2), "radius must be 0 (no blur) or between 0.5 and 500 pixels (got 0.2)"),
            (TiltShift(radius=501), "radius must be 0 (no blur) or between 0.5 and 500"),
            (TiltShift(output_format="gif"), "'gif' is not one of same, jpeg, png, webp, avif, tiff"),
            (TiltShift(quality=0), "quality must be between 1 and 100 (got 0)"),
            (TiltShift(quality=101), "quality must be between 1 and 100 (got 101)"),
            (TiltShift(jpeg_quality=0), "jpeg_quality must be between 1 and 100 (got 0)"),
            (TiltShift(output_format="png", quality=80), "quality applies to the lossy formats (jpeg, webp, avif), not to png"),
            (TiltShift(output_format="tiff", quality=80), "quality applies to the lossy formats (jpeg, webp, avif), not to tiff"),
            (TiltShift(quality=80, jpeg_quality=70), "give quality (every lossy format) or jpeg_quality (JPEG only), not both"),
            (TiltShift(colour="p3"), "colour 'p3' is not one of keep"),
            (TiltShift(metadata="drop"), "metadata 'drop' is not one of keep"),
            (TiltShift(angle=361), "angle must be between -360 and 360 degrees (got 361)"),
            (TiltShift(angle=float("inf")), "angle must be between -360 and 360 degrees"),
            (TiltShift(falloff="gradual"), "falloff 'gradual' is not one of blend"),
        ]
        for parameters, message in cases:
            with self.subTest(parameters=parameters), self.assertRaises(ValueError) as raised:
                sent(parameters)
            self.assertIn(message, str(raised.exception))

    def test_one_string_is_not_taken_for_a_list_of_sources(self):
        with self.assertRaises(ValueError) as raised:
            Session().submit("a.jpg", TiltShift())
        self.assertIn("not one string: give ['a.jpg']", str(raised.exception))


class SinkOutputTests(unittest.TestCase):
    def test_an_attached_batch_and_an_output_by_location_are_read_from_the_wire(self):
        session = Session()
        request_id, _ = session.submit(["a.jpg"], TiltShift(), options=SubmitOptions(idempotency_key="k", sink="/srv/out"))
        [answer] = session.receive([pb.Envelope(major=1, minor=3, batch_accepted=pb.BatchAccepted(
            request_id=request_id, batch_id="b-1", item_count=1, coordinator_id="c", attached=True)).SerializeToString()])
        self.assertTrue(answer.value.attached)
        finished = pb.ItemFinished(batch_id="b-1", item_index=0, output_name="a", output=pb.TaskOutput(
            media_type="image/jpeg", width=4, height=3, location="/srv/out/a.jpg", size=99, crc32c=5,
            warnings=["ignored a broken ICC profile"]))
        [event] = session.receive([pb.Envelope(major=1, minor=3, item_finished=finished).SerializeToString()])
        self.assertEqual(event.event.output, Output(b"", "image/jpeg", 4, 3, "/srv/out/a.jpg", 99, 5,
                                                    ("ignored a broken ICC profile",)))

    def test_an_output_written_to_a_sink_is_not_saved_as_an_empty_file(self):
        output = Output(b"", "image/webp", 4, 3, location="s3://photos-out/a.webp", size=120, crc32c=7)
        self.assertTrue(output.in_sink)
        item = ItemResult("b-1", 0, "a", "a.jpg", output)
        with self.assertRaises(ValueError) as raised:
            item.save("unused")
        self.assertIn("written by a worker to s3://photos-out/a.webp", str(raised.exception))
        self.assertFalse(os.path.exists("unused"))

    def test_webp_and_avif_outputs_are_saved_with_their_extensions(self):
        self.assertEqual(Output(b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp", 1, 1).extension, "webp")
        self.assertEqual(Output(b"\x00\x00\x00\x1cftypavif", "image/avif", 1, 1).extension, "avif")


if __name__ == "__main__":
    unittest.main()
