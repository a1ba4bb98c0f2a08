"""Real Shiftwork processes for the client's tests: a coordinator on a free loopback port and workers,
started from the `shiftwork` binary (``SHIFTWORK_BINARY``, else the debug build) and always stopped."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import tempfile
import threading
from typing import List, Optional

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def shiftwork_binary() -> str:
    binary = os.environ.get("SHIFTWORK_BINARY") or os.path.join(REPOSITORY, ".build", "debug", "shiftwork")
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"{binary} is not an executable: build it (swift build) or set SHIFTWORK_BINARY")
    return binary


class Process:
    """A child process whose output is collected line by line (stdout and stderr together)."""

    def __init__(self, name: str, arguments: List[str], cwd: Optional[str] = None):
        self.name = name
        # Only this test's settings: SHIFTWORK_* variables of the caller's shell would change the processes.
        environment = {key: value for key, value in os.environ.items() if not key.startswith("SHIFTWORK_")}
        self.popen = subprocess.Popen([shiftwork_binary()] + arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, env=environment, cwd=cwd, text=True, errors="replace")
        self.lines: List[str] = []
        self._queue: "queue.Queue[Optional[str]]" = queue.Queue()
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line.rstrip("\n"))
            self._queue.put(line)
        self._queue.put(None)

    def wait_for_line(self, fragment: str, timeout: float = 60) -> str:
        """The first line containing `fragment`; RuntimeError (with the output) when none comes in time."""
        for line in self.lines:
            if fragment in line:
                return line
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                line = None
            if line is None:
                raise RuntimeError(f"{self.name} did not print '{fragment}':\n" + "\n".join(self.lines))
            if fragment in line:
                return line.rstrip("\n")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s."""
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        if self.popen.stdout is not None:
            self.popen.stdout.close()


class LocalCluster:
    """A coordinator (with ``--insecure``, or CurveZMQ keys made by ``shiftwork keygen``) and workers that
    read local files (unless ``local_files=False``: then only uploaded bytes reach them). `stop()` stops
    every process it started and removes its scratch directory."""

    def __init__(self, workers: int = 1, data_dir: bool = False, curve: bool = False, host: str = "127.0.0.1",
                 local_files: bool = True, coordinator_options: Optional[List[str]] = None):
        """``host``: the address the coordinator listens on (an IPv6 one in brackets, e.g. ``[::1]``);
        ``coordinator_options``: more options of ``shiftwork coordinator`` (``--upload-window-mb 1``)."""
        self.local_files = local_files
        self.scratch = tempfile.mkdtemp(prefix="shiftwork-client-test-")
        self.processes: List[Process] = []
        self.keys = os.path.join(self.scratch, "keys")
        try:
            security = ["--insecure"]
            if curve:
                allowed = os.path.join(self.keys, "allowed")
                for name, directory in [("coordinator", self.keys), ("worker", allowed), ("client", allowed),
                                        ("stranger", self.keys)]:
                    subprocess.run([shiftwork_binary(), "keygen", name, "--out", directory], check=True,
                                   stdout=subprocess.DEVNULL)
                security = ["--secret-key", self.key("coordinator.key"), "--allow-keys", allowed]
            arguments = ["coordinator", "--listen", f"tcp://{host}:*"] + security + list(coordinator_options or [])
            if data_dir:
                arguments += ["--data-dir", os.path.join(self.scratch, "state")]
            coordinator = self._start("coordinator", arguments)
            self.endpoint = coordinator.wait_for_line("coordinator listening on ").split("listening on ")[-1].strip()
            started = [self.add_worker(f"test-worker-{index}") for index in range(workers)]
            for worker in started:  # the tests count on status listing every worker
                worker.wait_for_line("registered with the coordinator")
        except BaseException:
            self.stop()
            raise

    def key(self, name: str) -> str:
        """The path of a key file: ``coordinator.pub``, ``client.key`` (listed), ``stranger.key`` (not)."""
        for directory in (self.keys, os.path.join(self.keys, "allowed")):
            if os.path.exists(os.path.join(directory, name)):
                return os.path.join(directory, name)
        raise FileNotFoundError(name)

    def add_worker(self, worker_id: str) -> Process:
        keys = []
        if os.path.isdir(self.keys):
            keys = ["--secret-key", self.key("worker.key"), "--coordinator-key", self.key("coordinator.pub")]
        # The tests serve images from 127.0.0.1, which a worker refuses to fetch from unless allowed (source policy).
        local_files = ["--allow-local-files"] if self.local_files else []
        return self._start(worker_id, ["worker", "--slots", "2", "--worker-id", worker_id] + local_files
                           + ["--allow-source-networks", "127.0.0.0/8,::1/128", "--coordinator", self.endpoint] + keys)

    def _start(self, name: str, arguments: List[str]) -> Process:
        process = Process(name, arguments)
        self.processes.append(process)
        return process

    def output(self) -> str:
        """Everything the processes printed, for failure messages."""
        return "\n".join(f"--- {p.name}:\n" + "\n".join(p.lines) for p in self.processes)

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        self.processes = []
        shutil.rmtree(self.scratch, ignore_errors=True)
