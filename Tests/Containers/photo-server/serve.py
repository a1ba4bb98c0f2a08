"""The container tests' image server: the files of /srv/photos over HTTP on port 8000, each response after
PHOTO_DELAY seconds (default 0), so that a batch lasts long enough for a test to act while it runs."""
import functools
import http.server
import os
import time

DELAY = float(os.environ.get("PHOTO_DELAY", "0"))


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        time.sleep(DELAY)
        super().do_GET()


server = http.server.ThreadingHTTPServer(("0.0.0.0", 8000), functools.partial(Handler, directory="/srv/photos"))
print(f"Serving HTTP on port 8000 (delay {DELAY} s)", flush=True)
server.serve_forever()
