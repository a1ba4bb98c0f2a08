"""What the synchronous and the asyncio client share: the endpoint, the keys, the socket's options, and
the words of their errors."""

from __future__ import annotations

import ipaddress
import logging
import os
import threading
import uuid
from typing import List, Optional

import zmq

from .errors import AuthenticationError, NoAnswerError, ProtocolVersionError, RefusedError, ShiftworkError
from .keys import CurveKeys
from .session import Session

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5570"


def resolve_endpoint(endpoint: Optional[str]) -> str:
    """`endpoint`, else ``SHIFTWORK_COORDINATOR``, else ``tcp://127.0.0.1:5570``."""
    return endpoint or os.environ.get("SHIFTWORK_COORDINATOR") or DEFAULT_ENDPOINT


TRANSPORTS = ("tcp://", "ipc://", "inproc://")

LOG = logging.getLogger("shiftwork_client")


def parse_endpoints(endpoints: str) -> List[str]:
    """The coordinators of ``A,B`` (a pair, docs/failover.md), in order, as the Swift side parses them
    (``CoordinatorEndpoints``): spaces around an entry ignored, an entry given twice counted once. One endpoint
    is taken as it is. Raises `ValueError` naming an empty entry or an entry that is no endpoint."""
    if "," not in endpoints:
        return [endpoints.strip()]
    found: List[str] = []
    for position, entry in enumerate(endpoints.split(","), start=1):
        endpoint = entry.strip()
        if not endpoint:
            raise ValueError(f"the coordinator list {endpoints!r} has an empty entry (number {position}): separate "
                             f"endpoints with single commas, e.g. tcp://a:5570,tcp://b:5570")
        transport = next((t for t in TRANSPORTS if endpoint.startswith(t)), None)
        if transport is None or len(endpoint) == len(transport) or any(c in endpoint for c in " \t"):
            raise ValueError(f"{endpoint!r} is not a coordinator endpoint: give tcp://HOST:PORT (or ipc://PATH, "
                             f"inproc://NAME), e.g. tcp://coordinator:5570; separate several with commas")
        if endpoint not in found:
            found.append(endpoint)
    return found


def resolve_keys(keys: Optional[CurveKeys], secret_key_file: Optional[str],
                 coordinator_key_file: Optional[str]) -> Optional[CurveKeys]:
    """The CurveZMQ keys to use: `keys`, else the two files (``SHIFTWORK_SECRET_KEY`` and
    ``SHIFTWORK_COORDINATOR_KEY`` when not given), else none (a coordinator run with ``--insecure``)."""
    if keys is not None:
        return keys
    secret = secret_key_file or os.environ.get("SHIFTWORK_SECRET_KEY") or None
    coordinator = coordinator_key_file or os.environ.get("SHIFTWORK_COORDINATOR_KEY") or None
    if bool(secret) != bool(coordinator):
        raise ValueError("a secret key file and the coordinator's public key file go together (CurveZMQ), or neither "
                         "is given: set both secret_key_file and coordinator_key_file (or SHIFTWORK_SECRET_KEY and "
                         "SHIFTWORK_COORDINATOR_KEY)")
    return CurveKeys.from_files(secret, coordinator) if secret and coordinator else None


LINGER_MS = 200
"""How long unsent messages may delay closing, in milliseconds."""

TERMINATION_WAIT_S = 2 * LINGER_MS / 1000
"""How long closing waits for libzmq: the linger and as long again for its I/O thread."""


def terminate(context: zmq.Context) -> None:
    """Ends ``context``, waiting at most ``TERMINATION_WAIT_S``. libzmq's term waits for its I/O thread, which can
    be stuck for 10 to 60 s in a DNS lookup of the coordinator's name when the network (and its DNS server)
    vanished while it was reconnecting: closing must not wait for that, so the term runs on a daemon thread
    that is left to finish, or to end with the process."""
    thread = threading.Thread(target=context.term, name="zmq-ctx-term", daemon=True)
    thread.start()
    thread.join(TERMINATION_WAIT_S)


def needs_ipv6(endpoint: str) -> bool:
    """Whether connecting to ``endpoint`` needs IPv6 on the socket (ZMQ_IPV6), as the Swift side decides
    (``EndpointFamily``): an IPv6 address in brackets (``tcp://[::1]:5570``) or a name, which may resolve to
    one; not an IPv4 address, which then behaves as it always did (no IPv4-mapped addresses)."""
    if not endpoint.lower().startswith("tcp://"):
        return False
    host = endpoint[len("tcp://"):].split(";")[-1].rpartition(":")[0]
    if host.startswith("[") or host == "*":
        return True
    try:
        ipaddress.IPv4Address(host)
        return False
    except ValueError:
        return True


def configure(socket: zmq.Socket, keys: Optional[CurveKeys], endpoint: str) -> None:
    """A client's DEALER options (docs/protocol.md): a stable ``client-<uuid>`` routing identity, so that a
    restarted coordinator can stream to it again; a short linger; IPv6 where ``endpoint`` needs it
    (``tcp://[::1]:5570``, or a name that may resolve to an IPv6 address); CurveZMQ keys when given."""
    socket.setsockopt(zmq.ROUTING_ID, f"client-{uuid.uuid4()}".encode())
    socket.setsockopt(zmq.IPV6, 1 if needs_ipv6(endpoint) else 0)
    socket.setsockopt(zmq.LINGER, LINGER_MS)
    socket.setsockopt(zmq.RECONNECT_IVL, 100)
    socket.setsockopt(zmq.RECONNECT_IVL_MAX, 2000)
    if keys is not None:
        keys.apply(socket)


def is_passive(error: Optional[ShiftworkError]) -> bool:
    """Whether `error` is a refusal by the passive coordinator of a pair (``REFUSAL_CODE_PASSIVE``)."""
    return isinstance(error, RefusedError) and error.code == "REFUSAL_CODE_PASSIVE"


def no_answer(endpoint: str, seconds: float, keys: Optional[CurveKeys], what: str) -> NoAnswerError:
    """The error of a request that got no answer, naming what to check."""
    hint = ("check that the coordinator runs there and that coordinator_key is its public key"
            if keys is not None else
            "check that the coordinator runs there (a coordinator with CurveZMQ keys needs secret_key_file and "
            "coordinator_key_file)")
    return NoAnswerError(f"no answer to {what} from a coordinator at {endpoint} within {seconds:g} s: {hint}")


def refused_key(endpoint: str, status: int) -> AuthenticationError:
    """The error of a CurveZMQ handshake the coordinator refused."""
    return AuthenticationError(
        f"the coordinator at {endpoint} refused this client's CurveZMQ key (ZAP status {status}): put the client's "
        f"public key (NAME.pub, from `shiftwork keygen NAME`) on the coordinator's allow-list (--allow-keys)")


class Connection:
    """The socket of a client and what both forms keep beside it: the endpoint, the keys, the protocol
    session, and the error that ended the connection for good (a version mismatch, a refused key)."""

    def __init__(self, context: zmq.Context, endpoint: Optional[str], secret_key_file: Optional[str],
                 coordinator_key_file: Optional[str], keys: Optional[CurveKeys], timeout: float, protocol_major: int):
        try:
            self.endpoints = parse_endpoints(resolve_endpoint(endpoint))
        except ValueError:
            context.term()  # the caller's new context: nothing else owns it yet
            raise
        self.endpoint = self.endpoints[0]
        self.timeout = timeout
        self._keys = resolve_keys(keys, secret_key_file, coordinator_key_file)
        self._session = Session(protocol_major)
        self._broken: Optional[ShiftworkError] = None
        self._context = context
        self._socket = context.socket(zmq.DEALER)
        configure(self._socket, self._keys, next((e for e in self.endpoints if needs_ipv6(e)), self.endpoint))
        # With keys, libzmq reports the coordinator's refusal of the key (ZAP 400) on a monitor socket.
        self._monitor = self._socket.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_AUTH) if self._keys else None
        self._socket.connect(self.endpoint)

    def _turn(self, passive: bool = False) -> None:
        """Sends from now on to the next coordinator of the list, round-robin (the last one was silent, or
        refused the request as the passive one of its pair)."""
        following = self.endpoints[(self.endpoints.index(self.endpoint) + 1) % len(self.endpoints)]
        if passive:
            LOG.warning("the coordinator at %s is the passive one of its pair: turning to %s", self.endpoint,
                        following)
        else:
            LOG.warning("no answer from the coordinator at %s within %g s: turning to %s", self.endpoint,
                        self.timeout, following)
        self._socket.disconnect(self.endpoint)
        self.endpoint = following
        self._socket.connect(self.endpoint)

    def _close_socket(self) -> None:
        if self._monitor is not None:
            self._socket.disable_monitor()
            self._monitor.close(linger=0)
            self._monitor = None
        self._socket.close()
        terminate(self._context)

    def _end_if_final(self, error: ShiftworkError) -> None:
        """A version mismatch or a refused key fails every later call too: nothing sent can succeed."""
        if isinstance(error, (ProtocolVersionError, AuthenticationError)):
            self._broken = error
