#!/usr/bin/env python3
"""Delays every packet of an NFQUEUE queue by a fixed time, in order: netem's `delay` for a kernel without
sch_netem. Standard library only (nfnetlink_queue spoken over a raw netlink socket).

    packet-delay.py QUEUE_NUMBER DELAY_MS

Run it in the network namespace whose packets it delays, with a rule sending them to the queue, e.g.
`iptables -A OUTPUT -o IFACE -j NFQUEUE --queue-num QUEUE_NUMBER --queue-bypass`. Prints one line when the
queue is bound, then releases each packet DELAY_MS after it was queued, until killed.
"""

import heapq
import itertools
import select
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NLMSG_ERROR = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET = 0
NFQNL_MSG_VERDICT = 1
NFQNL_MSG_CONFIG = 2
NFQA_CFG_CMD = 1
NFQA_CFG_PARAMS = 2
NFQA_CFG_QUEUE_MAXLEN = 3
NFQA_CFG_MASK = 4
NFQA_CFG_FLAGS = 5
NFQA_CFG_F_FAIL_OPEN = 1
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NF_ACCEPT = 1


def attribute(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


def message(kind: int, flags: int, queue: int, attributes: list[bytes], sequence: int) -> bytes:
    body = struct.pack("!BBH", socket.AF_UNSPEC, 0, queue) + b"".join(attributes)
    return struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags, sequence, 0) + body


def acknowledged(sock: socket.socket) -> None:
    """Reads the kernel's answer to a request sent with NLM_F_ACK; raises on an error."""
    data = sock.recv(65536)
    length, kind = struct.unpack_from("=IH", data, 0)
    if kind == NLMSG_ERROR:
        (error,) = struct.unpack_from("=i", data, 16)
        if error != 0:
            raise OSError(-error, "nfqueue configuration refused")


def packet_ids(data: bytes):
    """The packet IDs of the NFQNL_MSG_PACKET messages in one read."""
    offset = 0
    while offset + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, offset)
        if length < 16:
            return
        if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            position = offset + 20  # the netlink header and nfgenmsg
            end = offset + length
            while position + 4 <= end:
                attribute_length, attribute_kind = struct.unpack_from("=HH", data, position)
                if attribute_length < 4:
                    break
                if attribute_kind & 0x3FFF == NFQA_PACKET_HDR:
                    (packet_id,) = struct.unpack_from("!I", data, position + 4)
                    yield packet_id
                    break
                position += (attribute_length + 3) & ~3
        offset += (length + 3) & ~3


def main() -> None:
    queue = int(sys.argv[1])
    delay = int(sys.argv[2]) / 1000
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE: a burst must not overflow the socket
    sock.bind((0, 0))
    sequence = itertools.count(1)
    config = NFQNL_MSG_CONFIG
    sock.send(message(config, NLM_F_REQUEST | NLM_F_ACK, queue,
                      [attribute(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND, socket.AF_INET))], next(sequence)))
    acknowledged(sock)
    sock.send(message(config, NLM_F_REQUEST | NLM_F_ACK, queue, [
        attribute(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META)),
        attribute(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", 65536)),
        attribute(NFQA_CFG_MASK, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN)),
        attribute(NFQA_CFG_FLAGS, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN)),
    ], next(sequence)))
    acknowledged(sock)
    print(f"packet delay on queue {queue}: {delay * 1000:g} ms", flush=True)
    due: list[tuple[float, int, int]] = []  # (release time, arrival order, packet id)
    arrivals = itertools.count()
    while True:
        timeout = max(0.0, due[0][0] - time.monotonic()) if due else None
        readable, _, _ = select.select([sock], [], [], timeout)
        if readable:
            try:
                data = sock.recv(1 << 20)
            except OSError:
                data = b""  # ENOBUFS: the kernel dropped messages (fail-open lets the packets through)
            now = time.monotonic()
            for packet_id in packet_ids(data):
                heapq.heappush(due, (now + delay, next(arrivals), packet_id))
        now = time.monotonic()
        verdicts = []
        while due and due[0][0] <= now:
            _, _, packet_id = heapq.heappop(due)
            verdicts.append(message(NFQNL_MSG_VERDICT, NLM_F_REQUEST, queue,
                                    [attribute(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, packet_id))], 0))
        for verdict in verdicts:
            sock.send(verdict)


if __name__ == "__main__":
    main()
