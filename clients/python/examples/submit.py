#!/usr/bin/env python3
"""Submit images to a Shiftwork coordinator, write each tilt-shifted image as it arrives, then show the
batch's status: the `shiftwork-client` package (clients/python) in about 130 lines. The inputs are URLs, local
files and directories (uploaded: their bytes go to the coordinator when it asks; --shared-disk sends their
paths instead). The options are those of `shiftwork submit` (format, quality, colour, metadata, priority, key,
retries, deadline, sink, S3 endpoint, shared disk, flat).

Set up with scripts/setup-python (or `pip install clients/python`), then:

    .venv-test/bin/python clients/python/examples/submit.py \\
        --coordinator tcp://127.0.0.1:5570 --out results https://example.org/a.jpg ~/Pictures/holiday

Exit status: 0 when every item succeeded, 1 when some failed, 2 when the coordinator did not answer,
refused the batch, or speaks another protocol version.
"""

import argparse
import os
import sys

from shiftwork_client import (BatchFinished, Client, ItemResult, ItemsAdded, ShiftworkError, TiltShift, printable,
                              redact_source, redact_urls)


def shown(source) -> str:
    """A source as printed: credentials masked, control characters escaped."""
    return printable(redact_source(source or ""))


def said(text: str) -> str:
    """A message as printed: URLs' credentials masked, control characters escaped."""
    return printable(redact_urls(text))


def run(args) -> int:
    try:
        parameters = TiltShift(focus=args.focus, band=args.band, transition=args.transition, radius=args.radius,
                               output_format=args.format, quality=args.quality, colour=args.colour,
                               metadata=args.metadata)
        with Client(args.coordinator, secret_key_file=args.secret_key, coordinator_key_file=args.coordinator_key,
                    timeout=args.timeout) as client:
            batch = client.submit(args.inputs, parameters, priority=args.priority, idempotency_key=args.key,
                                  retries=args.retries, deadline=args.deadline, sink=args.sink,
                                  s3_endpoint=args.s3_endpoint, shared_disk=args.shared_disk, flat=args.flat)
            for left in batch.left_out:
                print(f"left out: {said(left.reason)}", flush=True)  # the reason names the file
            for note in batch.notes:
                print(said(note), flush=True)
            verb = "attached to (same key)" if batch.attached else "accepted"
            print(f"batch {batch.batch_id} {verb}: {batch.item_count} items", flush=True)
            for event in batch:
                if isinstance(event, ItemsAdded):
                    print(f"item {event.parent_index} is a manifest: {len(event.sources)} items added", flush=True)
                elif isinstance(event, ItemResult) and event.is_manifest:
                    print(f"item {event.index} ok {shown(event.source)}: a manifest, expanded", flush=True)
                elif isinstance(event, ItemResult) and event.succeeded and event.output.in_sink:
                    output = event.output
                    print(f"item {event.index} ok {shown(event.source)} -> {output.location} (written by the worker; "
                          f"{output.width}x{output.height} {output.media_type}, {output.size} bytes)", flush=True)
                elif isinstance(event, ItemResult) and event.succeeded:
                    path = event.save(args.out)
                    output = event.output
                    print(f"item {event.index} ok {shown(event.source)} -> {path} "
                          f"({output.width}x{output.height} {output.media_type}, {len(output.data)} bytes)", flush=True)
                elif isinstance(event, ItemResult):
                    print(f"item {event.index} failed {shown(event.source)}: {event.failure.code}: {said(event.failure.message)}",
                          flush=True)
                elif isinstance(event, BatchFinished):
                    print(f"batch {event.batch_id} finished: {event.succeeded} succeeded, {event.failed} failed, "
                          f"{event.cancelled} cancelled", flush=True)

            status = client.status(batch.batch_id)
            for summary in status.batches:
                print(f"status {summary.batch_id}: {summary.item_count} items, {summary.succeeded} succeeded, "
                      f"{summary.failed} failed, {summary.cancelled} cancelled")
                for item in summary.items:
                    error = f"  {said(item.error)}" if item.error else ""
                    print(f"  item {item.index} {item.state} {shown(item.source)}{error}")
            print(f"cluster: {len(status.workers)} workers, {status.queued_tasks} queued tasks, "
                  f"{status.running_tasks} running tasks, {status.completed_tasks} completed tasks")
            return 0 if batch.finished and batch.finished.failed == 0 and batch.finished.cancelled == 0 else 1
    except (ShiftworkError, ValueError) as error:
        print(f"submit.py: {error}", file=sys.stderr)
        return 2


def main() -> None:
    parser = argparse.ArgumentParser(description="Submit images to a Shiftwork coordinator and save the results.")
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="images: URLs the workers fetch, or local files and directories (uploaded)")
    parser.add_argument("--coordinator", default=None,
                        help="the coordinator's endpoint (env SHIFTWORK_COORDINATOR; default tcp://127.0.0.1:5570)")
    parser.add_argument("--secret-key", default=None,
                        help="this client's CurveZMQ secret key file, NAME.key (env SHIFTWORK_SECRET_KEY)")
    parser.add_argument("--coordinator-key", default=None,
                        help="the coordinator's public key file (env SHIFTWORK_COORDINATOR_KEY)")
    parser.add_argument("--out", default="shiftwork-out", help="directory for the results (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=10, help="seconds to wait for an answer (default 10)")
    parser.add_argument("--focus", type=float, default=0.5, help="focus line, fraction of the height from the top")
    parser.add_argument("--band", type=float, default=0.0, help="height of the sharp band, fraction of the height")
    parser.add_argument("--transition", type=float, default=0.25, help="height of the sharp-to-blurred ramp")
    parser.add_argument("--radius", type=float, default=10.0, help="blur radius (Gaussian sigma) in pixels")
    parser.add_argument("--format", default="same", help="same (the input's; JPEG for HEIC, GIF, BMP), jpeg, png, webp, avif or tiff")
    parser.add_argument("--quality", type=int, default=None, help="quality of the lossy format written, 1...100")
    parser.add_argument("--colour", default="keep", help="keep (pixels and ICC profile) or srgb")
    parser.add_argument("--metadata", default="keep", help="keep (ICC, EXIF, XMP, IPTC) or strip (ICC only)")
    parser.add_argument("--priority", default="normal", help="-10...10, or low, normal, high (default normal)")
    parser.add_argument("--key", default=None, help="an idempotency key: submitting again attaches to the same batch")
    parser.add_argument("--retries", type=int, default=None, help="retries of a transient failure, 0...10 (default 2)")
    parser.add_argument("--deadline", type=int, default=None, help="seconds after which unfinished items are cancelled")
    parser.add_argument("--sink", default=None, help="a directory every worker reaches, or s3://BUCKET/PREFIX: the "
                                                     "workers write the outputs there (--out is then not used)")
    parser.add_argument("--s3-endpoint", default=None, help="an S3-compatible store's URL for s3:// sinks and inputs")
    parser.add_argument("--shared-disk", action="store_true",
                        help="send local files' paths instead of their bytes (workers run with --allow-local-files "
                             "that read this disk)")
    parser.add_argument("--flat", action="store_true", help="every output at the top of --out (a directory's folders "
                                                            "are kept by default)")
    args = parser.parse_args()
    if args.sink is None:
        os.makedirs(args.out, exist_ok=True)
    sys.exit(run(args))


if __name__ == "__main__":
    main()
