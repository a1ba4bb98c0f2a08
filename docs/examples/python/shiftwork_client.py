#!/usr/bin/env python3
"""A Shiftwork client in Python: submits a batch to a coordinator, writes each result, shows status.

It speaks the wire protocol directly (proto/shiftwork/v1/shiftwork.proto): one ZeroMQ DEALER socket
connected to the coordinator's ROUTER socket, one protobuf `Envelope` per message (a DEALER sends and
receives a single frame; the ROUTER adds and strips the peer identity).

    SubmitBatch(request_id)  ->  BatchAccepted(request_id, batch_id)
                             <-  ItemFinished(batch_id, item_index, output | failure)   one per item
                             <-  BatchFinished(batch_id, counts)
    StatusRequest(request_id, batch_id)  ->  StatusReply(request_id, ...)
    any request              <-  Refusal(request_id, reason)  instead, when refused

Set up with scripts/setup-python, then:

    .venv-test/bin/python docs/examples/python/shiftwork_client.py \
        --coordinator tcp://127.0.0.1:5570 --out results https://example.org/a.jpg https://example.org/b.png

Exit status: 0 when every item succeeded, 1 when some failed, 2 when the coordinator did not answer
or refused the batch.
"""

import argparse
import os
import re
import sys
import time
import urllib.parse
import uuid

import zmq

try:
    from shiftwork.v1 import shiftwork_pb2 as pb
except ImportError:
    sys.exit("shiftwork_client: the generated module shiftwork.v1.shiftwork_pb2 is missing: run "
             "scripts/setup-python and use .venv-test/bin/python (or generate it with "
             "`protoc --proto_path=proto --python_out=DIR proto/shiftwork/v1/shiftwork.proto` "
             "and put DIR on PYTHONPATH)")

MAJOR, MINOR = 1, 0  # the wire protocol version this client speaks


def extension(data, media_type):
    """The file extension of an output image, from its first bytes (as `shiftwork submit` does)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpg"
    return {"image/jpeg": "jpg", "image/png": "png"}.get(media_type, "bin")


class CoordinatorError(Exception):
    """The coordinator did not answer in time, or refused a request."""


def read_key(path):
    """The Z85 key in a key file of `shiftwork keygen`: the line that is not blank or a `# ` comment."""
    with open(path, encoding="utf-8") as file:
        lines = [line.strip() for line in file if line.strip() and line.strip() != "#" and not line.startswith("# ")]
    if len(lines) != 1 or len(lines[0].split()[0]) != 40:
        sys.exit(f"shiftwork_client: {path} does not hold one CurveZMQ key (40 characters of Z85, as `shiftwork keygen` writes)")
    return lines[0].split()[0].encode()


class Client:
    """One DEALER socket to the coordinator; every answer is matched by request ID or batch ID."""

    def __init__(self, endpoint, timeout, secret_key=None, coordinator_key=None):
        self.endpoint = endpoint
        self.timeout = timeout
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 200)
        if secret_key:  # CurveZMQ: this client's pair, and the coordinator's public key
            secret = read_key(secret_key)
            self.socket.curve_secretkey = secret
            self.socket.curve_publickey = zmq.curve_public(secret)
            self.socket.curve_serverkey = read_key(coordinator_key)
        self.socket.connect(endpoint)

    def close(self):
        self.socket.close()
        self.context.term()

    def send(self, **body):
        self.socket.send(pb.Envelope(major=MAJOR, minor=MINOR, **body).SerializeToString())

    def receive(self, timeout):
        """The next envelope, or None after `timeout` seconds (None waits forever)."""
        if not self.socket.poll(None if timeout is None else int(timeout * 1000)):
            return None
        frames = self.socket.recv_multipart()
        envelope = pb.Envelope.FromString(frames[-1])  # the envelope is always the last frame
        if envelope.major != MAJOR:
            raise CoordinatorError(f"the coordinator speaks protocol {envelope.major}, this client {MAJOR}")
        return envelope

    def answer(self, request_id, kind):
        """Waits for the answer of kind `kind` to `request_id`; other messages are ignored."""
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            envelope = self.receive(left)
            if envelope is None:
                break
            body = envelope.WhichOneof("body")
            if body == "refusal" and envelope.refusal.request_id in (request_id, ""):
                raise CoordinatorError(f"the coordinator refused the request: {envelope.refusal.reason}")
            if body == kind and getattr(envelope, kind).request_id == request_id:
                return getattr(envelope, kind)
        raise CoordinatorError(f"no answer from a coordinator at {self.endpoint} within {self.timeout:g} s")

    def submit(self, sources, parameters):
        """Submits a batch; yields BatchAccepted, then ItemsAdded (a manifest grew the batch) and each
        ItemFinished as they come, then BatchFinished."""
        request_id = str(uuid.uuid4())
        items = [pb.BatchItem(source=source, output_name=name) for source, name in zip(sources, output_names(sources))]
        self.send(submit_batch=pb.SubmitBatch(request_id=request_id, items=items, parameters=parameters))
        accepted = self.answer(request_id, "batch_accepted")
        yield accepted
        while True:
            envelope = self.receive(None)  # items take as long as they take; `status` shows progress
            body = envelope.WhichOneof("body")
            if body in ("item_finished", "items_added", "batch_finished") and getattr(envelope, body).batch_id == accepted.batch_id:
                yield getattr(envelope, body)
                if body == "batch_finished":
                    return

    def status(self, batch_id=""):
        """The cluster's status, with the items of `batch_id` when given."""
        request_id = str(uuid.uuid4())
        self.send(status_request=pb.StatusRequest(request_id=request_id, batch_id=batch_id))
        return self.answer(request_id, "status_reply")


def output_names(sources):
    """Distinct, safe file stems from the inputs' last path components (as `shiftwork submit` does)."""
    names, used = [], set()
    for source in sources:
        path = urllib.parse.urlsplit(source).path if "://" in source else source
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.splitext(os.path.basename(path.rstrip("/")))[0])
        stem = stem.lstrip(".") or "image"
        name, counter = stem, 2
        while name.lower() in used:
            name, counter = f"{stem}-{counter}", counter + 1
        used.add(name.lower())
        names.append(name)
    return names


def run(args):
    parameters = pb.TiltShiftParameters(
        focus_position=args.focus, sharp_band=args.band, transition=args.transition,
        blur_radius=args.radius, output_format=pb.IMAGE_FORMAT_SAME_AS_INPUT, jpeg_quality=90)
    client = Client(args.coordinator, args.timeout, args.secret_key, args.coordinator_key)
    try:
        failed = 0
        sources = list(args.inputs)  # grows when a manifest adds items
        for event in client.submit(args.inputs, parameters):
            if isinstance(event, pb.BatchAccepted):
                batch_id = event.batch_id
                print(f"batch {batch_id} accepted: {event.item_count} items", flush=True)
            elif isinstance(event, pb.ItemsAdded):
                sources.extend([None] * (event.first_index + len(event.items) - len(sources)))
                for offset, item in enumerate(event.items):
                    sources[event.first_index + offset] = item.source
                print(f"item {event.parent_index} is a manifest: {len(event.items)} items added", flush=True)
            elif isinstance(event, pb.ItemFinished):
                source = sources[event.item_index] if event.item_index < len(sources) else f"item {event.item_index}"
                if event.WhichOneof("outcome") == "output" and event.output.media_type == "text/uri-list":
                    print(f"item {event.item_index} ok {source}: a manifest, expanded", flush=True)
                elif event.WhichOneof("outcome") == "output":
                    output = event.output
                    path = os.path.join(args.out, f"{event.output_name}.{extension(output.data, output.media_type)}")
                    os.makedirs(args.out, exist_ok=True)
                    with open(path, "wb") as file:
                        file.write(output.data)
                    print(f"item {event.item_index} ok {source} -> {path} "
                          f"({output.width}x{output.height} {output.media_type}, {len(output.data)} bytes)", flush=True)
                else:
                    failed += 1
                    code = pb.FailureCode.Name(event.failure.code)
                    print(f"item {event.item_index} failed {source}: {code}: {event.failure.message}", flush=True)
            else:
                print(f"batch {batch_id} finished: {event.succeeded} succeeded, {event.failed} failed, "
                      f"{event.cancelled} cancelled", flush=True)

        reply = client.status(batch_id)
        for batch in reply.batches:
            print(f"status {batch.batch_id}: {batch.item_count} items, {batch.succeeded} succeeded, "
                  f"{batch.failed} failed, {batch.cancelled} cancelled")
            for item in batch.items:
                error = f"  {item.error}" if item.error else ""
                print(f"  item {item.item_index} {item.state} {item.source}{error}")
        print(f"cluster: {len(reply.workers)} workers, {reply.queued_tasks} queued tasks, "
              f"{reply.running_tasks} running tasks, {reply.completed_tasks} completed tasks")
        return 1 if failed else 0
    except CoordinatorError as error:
        print(f"shiftwork_client: {error}", file=sys.stderr)
        return 2
    finally:
        client.close()


def main():
    parser = argparse.ArgumentParser(description="Submit images to a Shiftwork coordinator and save the results.")
    parser.add_argument("inputs", nargs="+", metavar="URL", help="images the workers can fetch (http, https)")
    parser.add_argument("--coordinator", default=os.environ.get("SHIFTWORK_COORDINATOR", "tcp://127.0.0.1:5570"),
                        help="the coordinator's endpoint (env SHIFTWORK_COORDINATOR; default %(default)s)")
    parser.add_argument("--secret-key", default=os.environ.get("SHIFTWORK_SECRET_KEY") or None,
                        help="this client's CurveZMQ secret key file, NAME.key (env SHIFTWORK_SECRET_KEY)")
    parser.add_argument("--coordinator-key", default=os.environ.get("SHIFTWORK_COORDINATOR_KEY") or None,
                        help="the coordinator's public key file (env SHIFTWORK_COORDINATOR_KEY)")
    parser.add_argument("--out", default="shiftwork-out", help="directory for the results (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=10, help="seconds to wait for an answer (default 10)")
    parser.add_argument("--focus", type=float, default=0.5, help="focus line, fraction of the height from the top")
    parser.add_argument("--band", type=float, default=0.0, help="height of the sharp band, fraction of the height")
    parser.add_argument("--transition", type=float, default=0.25, help="height of the sharp-to-blurred ramp")
    parser.add_argument("--radius", type=float, default=10.0, help="blur radius (Gaussian sigma) in pixels")
    args = parser.parse_args()
    if bool(args.secret_key) != bool(args.coordinator_key):
        parser.error("--secret-key and --coordinator-key go together (CurveZMQ), or neither is given")
    sys.exit(run(args))


if __name__ == "__main__":
    main()
