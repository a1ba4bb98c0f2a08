"""The container tests' image server: the files of /srv/photos over HTTP on port 8000, each response after
PHOTO_DELAY seconds (default 0), so that a batch lasts long enough for a test to act while it runs."""
import functools
import http.server
import os
import socket
import time

DELAY = float(os.environ.get("PHOTO_DELAY", "0"))


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        time.sleep(DELAY)
        super().do_GET()


class DualStackServer(http.server.ThreadingHTTPServer):
    """Listens on [::]:8000 with IPV6_V6ONLY off: IPv4 and IPv6 clients alike (a network may be dual stack)."""
    address_family = socket.AF_INET6

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


handler = functools.partial(Handler, directory="/srv/photos")
try:
    server = DualStackServer(("::", 8000), handler)
except OSError:  # a container without IPv6
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 8000), handler)
print(f"Serving HTTP on port 8000 (delay {DELAY} s)", flush=True)
server.serve_forever()
