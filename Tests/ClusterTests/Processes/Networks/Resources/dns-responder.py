#!/usr/bin/env python3
"""A tiny authoritative DNS server for tests: answers A and AAAA queries over UDP for the names it is given,
NXDOMAIN for any other name. Standard library only.

    dns-responder.py LISTEN_ADDRESS NAME=ADDRESS [NAME=ADDRESS ...]

Listens on port 53 of LISTEN_ADDRESS (IPv4 or IPv6), prints one line when ready, and answers until killed.
"""

import ipaddress
import socket
import struct
import sys


def parse_name(packet: bytes, offset: int) -> tuple[str, int]:
    labels = []
    while True:
        if offset >= len(packet):
            raise ValueError("truncated name")
        length = packet[offset]
        offset += 1
        if length == 0:
            return ".".join(labels).lower(), offset
        if length & 0xC0:
            raise ValueError("compressed names are not expected in a question")
        labels.append(packet[offset:offset + length].decode("ascii", "replace"))
        offset += length


def answer(query: bytes, records: dict) -> bytes | None:
    if len(query) < 12:
        return None
    ident, flags, questions = struct.unpack("!HHH", query[:6])
    if flags & 0x8000 or questions != 1:
        return None
    try:
        name, end = parse_name(query, 12)
    except ValueError:
        return None
    if end + 4 > len(query):
        return None
    qtype, qclass = struct.unpack("!HH", query[end:end + 4])
    question = query[12:end + 4]
    known = records.get(name)
    answers = []
    if known is not None:
        for address in known:
            if qtype == 1 and address.version == 4 or qtype == 28 and address.version == 6:
                data = address.packed
                answers.append(b"\xc0\x0c" + struct.pack("!HHIH", qtype, 1, 5, len(data)) + data)
    rcode = 3 if known is None else 0  # NXDOMAIN for unknown names
    header = struct.pack("!HHHHHH", ident, 0x8400 | 0x0100 & flags | rcode, 1, len(answers), 0, 0)
    return header + question + b"".join(answers)


def main() -> None:
    listen = sys.argv[1]
    records: dict = {}
    for pair in sys.argv[2:]:
        name, _, address = pair.partition("=")
        records.setdefault(name.lower().rstrip("."), []).append(ipaddress.ip_address(address))
    family = socket.AF_INET6 if ":" in listen else socket.AF_INET
    server = socket.socket(family, socket.SOCK_DGRAM)
    server.bind((listen, 53))
    print(f"dns responder listening on {listen}:53", flush=True)
    while True:
        query, peer = server.recvfrom(4096)
        reply = answer(query, records)
        if reply is not None:
            server.sendto(reply, peer)


if __name__ == "__main__":
    main()
