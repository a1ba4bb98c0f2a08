"""What a submission asks besides its images and filter: priority, idempotency key, retries, deadline and
sink (`SubmitOptions`), and the checks of the filter's and the encoder's settings (`TiltShift`), with the
ranges the `shiftwork` CLI and the coordinator use, so that a wrong value fails here with what to give
instead of as a refusal or as failed items."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Optional, Union

from ._proto.shiftwork.v1 import shiftwork_pb2 as pb
from .models import TiltShift

PRIORITY_RANGE = range(-10, 11)
"""The priorities a batch may have (`BatchPriority`): higher runs sooner, each 2 points double its share."""
PRIORITY_NAMES = {"low": -5, "normal": 0, "high": 5}
"""The names a priority may be given by, with their values."""
RETRIES_RANGE = range(0, 11)
"""The retries of each task a batch may ask for (`--retries`)."""
DEADLINE_RANGE = range(1, 2_592_001)
"""The deadlines a batch may have, in seconds (`--deadline`): at most 30 days."""
IDEMPOTENCY_KEY_MAX_LENGTH = 128
_IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9._\-:@]*")
_BUCKET = re.compile(r"[a-z0-9.\-]{3,63}")

_FORMATS = {"same": pb.IMAGE_FORMAT_SAME_AS_INPUT, "jpeg": pb.IMAGE_FORMAT_JPEG, "jpg": pb.IMAGE_FORMAT_JPEG,
            "png": pb.IMAGE_FORMAT_PNG, "webp": pb.IMAGE_FORMAT_WEBP, "avif": pb.IMAGE_FORMAT_AVIF,
            "tiff": pb.IMAGE_FORMAT_TIFF, "tif": pb.IMAGE_FORMAT_TIFF}
_COLOURS = ("keep", "srgb")
_METADATA = ("keep", "strip")
_FALLOFFS = {"blend": pb.FALLOFF_BLEND, "progressive": pb.FALLOFF_PROGRESSIVE}
MAX_BLUR_RADIUS = 500.0
MAX_ANGLE = 360.0


@dataclass(frozen=True)
class SubmitOptions:
    """How a batch is run, besides its filter (the keyword arguments of `Client.submit`).

    - `priority`: the batch's share of the cluster against other waiting batches, -10…10 or ``"low"``,
      ``"normal"``, ``"high"`` (-5, 0, 5); each 2 points double it, lower priorities still progress.
    - `idempotency_key`: 1–128 of ``A-Z a-z 0-9 . _ - : @``; submitting again with the same key attaches to
      the batch the first submission made (while the coordinator keeps it) instead of running it twice.
    - `retries`: retries of each task after a transient failure, 0…10 (None: the coordinator's default, 2).
    - `deadline`: seconds, 1…2,592,000 (30 days), after which the batch's unfinished items are cancelled
      (None or 0: no deadline).
    - `sink`: where the workers write the outputs themselves: a directory every worker reaches (a relative
      path is made absolute here, as the CLI does), or ``s3://BUCKET/PREFIX``; the items then carry the
      output's `location` instead of its bytes. The workers need S3 credentials for an ``s3://`` sink.
    - `s3_endpoint`: the ``http(s)://`` URL of an S3-compatible store for ``s3://`` sinks and sources
      (None: AWS)."""

    priority: Union[int, str] = 0
    idempotency_key: Optional[str] = None
    retries: Optional[int] = None
    deadline: Optional[int] = None
    sink: Optional[str] = None
    s3_endpoint: Optional[str] = None

    def checked(self) -> "SubmitOptions":
        """These options with the priority as a number and the sink as sent; `ValueError` (saying what to give)
        for a value out of range."""
        return SubmitOptions(priority=_priority(self.priority), idempotency_key=_idempotency_key(self.idempotency_key),
                             retries=_integer_in("retries", self.retries, RETRIES_RANGE),
                             deadline=_integer_in("deadline", self.deadline or None, DEADLINE_RANGE, unit=" seconds"),
                             sink=_sink(self.sink), s3_endpoint=_s3_endpoint(self.s3_endpoint))

    def fill(self, submit: "pb.SubmitBatch") -> None:
        """Sets these (checked) options on a `SubmitBatch`; what is not set stays at its default (no byte)."""
        submit.priority = int(self.priority)
        if self.idempotency_key:
            submit.idempotency_key = self.idempotency_key
        if self.retries is not None:
            submit.retries = self.retries
        if self.deadline:
            submit.deadline_seconds = self.deadline
        if self.sink:
            submit.sink = self.sink
        if self.s3_endpoint:
            submit.s3_endpoint = self.s3_endpoint


def wire_parameters(parameters: TiltShift) -> "pb.TiltShiftParameters":
    """`parameters` as `TiltShiftParameters`; `ValueError` (naming the value and its range) when one is out of
    range: focus, band and transition 0…1, radius 0 or 0.5…500, angle -360…360, falloff blend or progressive,
    quality 1…100 (not with png), colour keep or srgb, metadata keep or strip."""
    for name, value in (("focus", parameters.focus), ("band", parameters.band), ("transition", parameters.transition)):
        if not _is_number(value) or not 0 <= value <= 1:
            raise ValueError(f"{name} must be between 0 and 1 (got {value!r})")
    radius = parameters.radius
    if not _is_number(radius) or not (radius == 0 or 0.5 <= radius <= MAX_BLUR_RADIUS):
        raise ValueError(f"radius must be 0 (no blur) or between 0.5 and {MAX_BLUR_RADIUS:g} pixels (got {radius!r})")
    angle = parameters.angle
    if not _is_number(angle) or not -MAX_ANGLE <= angle <= MAX_ANGLE:
        raise ValueError(f"angle must be between -{MAX_ANGLE:g} and {MAX_ANGLE:g} degrees (got {angle!r})")
    falloff = str(parameters.falloff).lower()
    if falloff not in _FALLOFFS:
        raise ValueError(f"falloff '{parameters.falloff}' is not one of blend (one blur blended in), progressive "
                         f"(the blur grows away from the sharp band)")
    output_format = str(parameters.output_format).lower()
    if output_format not in _FORMATS:
        raise ValueError(f"output_format '{parameters.output_format}' is not one of same, jpeg, png, webp, avif, tiff")
    colour, metadata = str(parameters.colour).lower(), str(parameters.metadata).lower()
    if colour not in _COLOURS:
        raise ValueError(f"colour '{parameters.colour}' is not one of keep (the pixels and their ICC profile as they "
                         f"are), srgb (profiled RGB converted to sRGB)")
    if metadata not in _METADATA:
        raise ValueError(f"metadata '{parameters.metadata}' is not one of keep (ICC profile, EXIF, XMP, IPTC), "
                         f"strip (the ICC profile only)")
    jpeg_quality = _integer_in("jpeg_quality", parameters.jpeg_quality, range(1, 101))
    webp_quality = avif_quality = 0  # 0: the format's default (WebP 80, AVIF 60)
    if parameters.quality is not None:
        if output_format in ("png", "tiff", "tif"):
            raise ValueError(f"quality applies to the lossy formats (jpeg, webp, avif), not to {output_format}: leave it out")
        if parameters.jpeg_quality != TiltShift.jpeg_quality:
            raise ValueError("give quality (every lossy format) or jpeg_quality (JPEG only), not both")
        jpeg_quality = webp_quality = avif_quality = _integer_in("quality", parameters.quality, range(1, 101))
    return pb.TiltShiftParameters(
        focus_position=parameters.focus, sharp_band=parameters.band, transition=parameters.transition,
        blur_radius=radius, output_format=_FORMATS[output_format], jpeg_quality=jpeg_quality,
        webp_quality=webp_quality, avif_quality=avif_quality, colour_srgb=colour == "srgb",
        strip_metadata=metadata == "strip", angle=angle, falloff=_FALLOFFS[falloff])


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integer_in(name: str, value: Optional[int], allowed: range, unit: str = "") -> Optional[int]:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be a whole number between {allowed.start} and {allowed.stop - 1}{unit} (got {value!r})")
    if value not in allowed:
        raise ValueError(f"{name} must be between {allowed.start} and {allowed.stop - 1}{unit} (got {value})")
    return value


def _priority(priority: Union[int, str, None]) -> int:
    names = ", ".join(f"{name} ({value})" for name, value in PRIORITY_NAMES.items())
    if priority is None:
        return 0
    if isinstance(priority, str):
        text = priority.strip().lower()
        if text in PRIORITY_NAMES:
            return PRIORITY_NAMES[text]
        try:
            priority = int(text)
        except ValueError:
            raise ValueError(f"'{priority}' is not a priority: give a number -10...10 (higher runs sooner), or "
                             f"{names}") from None
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise ValueError(f"priority must be a number -10...10 or one of {names} (got {priority!r})")
    if priority not in PRIORITY_RANGE:
        raise ValueError(f"priority {priority} is out of range: give -10...10 (higher runs sooner), or {names}")
    return priority


def _idempotency_key(key: Optional[str]) -> Optional[str]:
    if key is None:
        return None
    if not isinstance(key, str):
        raise ValueError(f"the idempotency key must be a string (got {key!r})")
    if not key:
        raise ValueError(f"the idempotency key is empty: give 1-{IDEMPOTENCY_KEY_MAX_LENGTH} characters of "
                         f"A-Z a-z 0-9 . _ - : @, or None for none")
    length = len(key.encode("utf-8"))
    if length > IDEMPOTENCY_KEY_MAX_LENGTH:
        raise ValueError(f"the idempotency key has {length} characters, more than {IDEMPOTENCY_KEY_MAX_LENGTH}: use a "
                         f"shorter one (a UUID or a hash of what you submit)")
    if not _IDEMPOTENCY_KEY.fullmatch(key):
        bad = next(character for character in key if not _IDEMPOTENCY_KEY.fullmatch(character))
        raise ValueError(f"the idempotency key holds {bad!r}, which keys may not: use only A-Z a-z 0-9 . _ - : @")
    return key


def _sink(sink: Optional[str]) -> Optional[str]:
    if sink is None:
        return None
    trimmed = str(sink).strip()
    if not trimmed:
        raise ValueError("sink is empty: give a directory every worker reaches, or s3://BUCKET/PREFIX (or None: "
                         "outputs come back to this client)")
    if trimmed.lower().startswith("s3://"):
        bucket = trimmed[len("s3://"):].split("/", 1)[0]
        if not _BUCKET.fullmatch(bucket):
            raise ValueError(f"sink {trimmed}: '{bucket}' is not a valid bucket name (3 to 63 lowercase letters, "
                             f"digits, '.' or '-')")
        return trimmed
    if trimmed.startswith("file://"):
        return trimmed
    if "://" in trimmed:
        raise ValueError(f"sink {trimmed}: give a directory (a path every worker reaches) or s3://BUCKET/PREFIX")
    return os.path.abspath(trimmed)


def _s3_endpoint(endpoint: Optional[str]) -> Optional[str]:
    if endpoint is None or endpoint == "":
        return None
    if not isinstance(endpoint, str) or not re.match(r"https?://[^/\s]+", endpoint.strip()):
        raise ValueError(f"s3_endpoint {endpoint!r} is not an http(s) URL: give the store's address, e.g. "
                         f"http://minio:9000 (or None for AWS)")
    return endpoint.strip()
