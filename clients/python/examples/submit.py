#!/usr/bin/env python3
"""Submit images to a Shiftwork coordinator, write each tilt-shifted image as it arrives, then show the
batch's status: the `shiftwork-client` package (clients/python) in about 100 lines.

Set up with scripts/setup-python (or `pip install clients/python`), then:

    .venv-test/bin/python clients/python/examples/submit.py \\
        --coordinator tcp://127.0.0.1:5570 --out results https://example.org/a.jpg https://example.org/b.png

Exit status: 0 when every item succeeded, 1 when some failed, 2 when the coordinator did not answer,
refused the batch, or speaks another protocol version.
"""

import argparse
import os
import sys

from shiftwork_client import Client, ItemResult, ItemsAdded, BatchFinished, ShiftworkError, TiltShift


def run(args) -> int:
    parameters = TiltShift(focus=args.focus, band=args.band, transition=args.transition, radius=args.radius)
    try:
        with Client(args.coordinator, secret_key_file=args.secret_key, coordinator_key_file=args.coordinator_key,
                    timeout=args.timeout) as client:
            batch = client.submit(args.inputs, parameters)
            print(f"batch {batch.batch_id} accepted: {batch.item_count} items", flush=True)
            for event in batch:
                if isinstance(event, ItemsAdded):
                    print(f"item {event.parent_index} is a manifest: {len(event.sources)} items added", flush=True)
                elif isinstance(event, ItemResult) and event.is_manifest:
                    print(f"item {event.index} ok {event.source}: a manifest, expanded", flush=True)
                elif isinstance(event, ItemResult) and event.succeeded:
                    path = event.save(args.out)
                    output = event.output
                    print(f"item {event.index} ok {event.source} -> {path} "
                          f"({output.width}x{output.height} {output.media_type}, {len(output.data)} bytes)", flush=True)
                elif isinstance(event, ItemResult):
                    print(f"item {event.index} failed {event.source}: {event.failure.code}: {event.failure.message}",
                          flush=True)
                elif isinstance(event, BatchFinished):
                    print(f"batch {event.batch_id} finished: {event.succeeded} succeeded, {event.failed} failed, "
                          f"{event.cancelled} cancelled", flush=True)

            status = client.status(batch.batch_id)
            for summary in status.batches:
                print(f"status {summary.batch_id}: {summary.item_count} items, {summary.succeeded} succeeded, "
                      f"{summary.failed} failed, {summary.cancelled} cancelled")
                for item in summary.items:
                    error = f"  {item.error}" if item.error else ""
                    print(f"  item {item.index} {item.state} {item.source}{error}")
            print(f"cluster: {len(status.workers)} workers, {status.queued_tasks} queued tasks, "
                  f"{status.running_tasks} running tasks, {status.completed_tasks} completed tasks")
            return 0 if batch.finished and batch.finished.failed == 0 and batch.finished.cancelled == 0 else 1
    except (ShiftworkError, ValueError) as error:
        print(f"submit.py: {error}", file=sys.stderr)
        return 2


def main() -> None:
    parser = argparse.ArgumentParser(description="Submit images to a Shiftwork coordinator and save the results.")
    parser.add_argument("inputs", nargs="+", metavar="URL", help="images the workers can fetch (http, https)")
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
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    sys.exit(run(args))


if __name__ == "__main__":
    main()
