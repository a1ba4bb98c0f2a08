"""The cluster in containers on networks of their own (issue #27): a dual-stack container network over which
the coordinator, a worker, the client and the photos speak IPv6 only (literal addresses in brackets), and
workers killed with SIGKILL while they write into a shared sink directory, which must never hold a file under
its final name that is not whole."""
import pathlib
import secrets
import subprocess
import time

from support import BINARY, HANG, LABEL, PHOTO_IMAGE, ContainerTestCase, free_port, podman, poll


def image_is_whole(path):
    """Whether `path` is a complete JPEG (SOI … EOI) or PNG (signature … IEND chunk): a truncated write is not."""
    data = path.read_bytes()
    if data[:2] == b"\xff\xd8":
        return data.rstrip(b"\x00")[-2:] == b"\xff\xd9"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return data[-12:-8] == b"\x00\x00\x00\x00" and data[-8:-4] == b"IEND"
    return False


class IPv6NetworkTests(ContainerTestCase):
    def test_a_batch_runs_over_ipv6_between_containers(self):
        subnet = f"fd00:{secrets.randbelow(0xffff):x}:{secrets.randbelow(0xffff):x}::"
        network = self.name("net6")
        podman("network", "create", "--label", LABEL, "--ipv6", "--subnet", f"{subnet}/64", network)
        self.networks.append(network)
        coordinator_address, photos_address, worker_address = f"{subnet}10", f"{subnet}20", f"{subnet}30"
        self.start("coordinator", "--network", network, "--ip6", coordinator_address,
                   "-e", "SHIFTWORK_INSECURE=1", "--", "coordinator", "--listen", "tcp://*:5570")
        photos = self.start("photos", "--network", network, "--ip6", photos_address, "--", image=PHOTO_IMAGE)
        poll(f"the photo server {photos}", lambda: "Serving HTTP" in podman("logs", photos, check=False).stdout)
        endpoint = f"tcp://[{coordinator_address}]:5570"
        worker = self.start("worker", "--network", network, "--ip6", worker_address,
                            "-e", "SHIFTWORK_INSECURE=1", "--", "worker", "--coordinator", endpoint)
        poll("the worker's registration over IPv6",
             lambda: "registered with the coordinator" in podman("logs", worker, check=False).stdout, attempts=120)
        out = self.scratch / "out"
        out.mkdir()
        out.chmod(0o777)
        urls = [f"http://[{photos_address}]:8000/{name}" for name in ("rocket.jpg", "chelsea.png")]
        status, output = self.run_once("--network", network, "-v", f"{out}:/out", "-e", "SHIFTWORK_INSECURE=1",
                                       "--", "submit", *urls, "--coordinator", endpoint, "--out", "/out")
        self.assertEqual(status, 0, f"submit over IPv6 failed:\n{output}\nworker:\n"
                         f"{podman('logs', worker, check=False).stdout}")
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["chelsea.png", "rocket.jpg"], output)
        self.assertIn(f"[{coordinator_address}]", podman("logs", worker, check=False).stdout,
                      "the worker names the IPv6 endpoint it connected to")


class SinkKillTests(ContainerTestCase):
    def test_a_worker_killed_while_writing_to_a_sink_leaves_no_partial_file_under_a_final_name(self):
        network = self.network()
        # Each photo a little late, so that the batch is still running when the kills come.
        photos = self.start("photos", "--network", network, "--network-alias", "photos", "-e", "PHOTO_DELAY=0.3",
                            "--", image=PHOTO_IMAGE)
        poll(f"the photo server {photos}", lambda: "Serving HTTP" in podman("logs", photos, check=False).stdout)
        port = free_port()
        self.start("coordinator", "--network", network, "--network-alias", "coordinator",
                   "-p", f"127.0.0.1:{port}:5570", "-e", "SHIFTWORK_INSECURE=1", "--", "coordinator",
                   "--listen", "tcp://*:5570")
        sink = self.scratch / "sink"
        sink.mkdir()
        sink.chmod(0o777)

        def worker():
            return self.start("worker", "--network", network, "-v", f"{sink}:/sink",
                              "-e", "SHIFTWORK_COORDINATOR=tcp://coordinator:5570", "--", "worker",
                              "--sink-dir", "/sink", "--slots", "4")

        workers = [worker(), worker()]
        count = 80
        urls = [f"http://photos:8000/{('rocket.jpg', 'chelsea.png')[i % 2]}?copy={i}" for i in range(count)]
        submit = subprocess.Popen([BINARY, "submit", *urls, "--sink", "/sink", "--format", "png",
                                   "--coordinator", f"tcp://127.0.0.1:{port}", "--retries", "5"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        kills = 0
        try:
            # Kill a worker (SIGKILL: no goodbye, no clean-up) each time more outputs have appeared, twice, each
            # replaced by a new one: kills land at random points of downloads, filters and sink writes. (Twice: a task
            # lost with its worker three times fails as `worker lost` by design, and a retry may land on the next
            # victim.)
            for round in range(2):
                seen = len(list(sink.iterdir()))
                poll("more outputs in the sink", lambda: len(list(sink.iterdir())) > seen + 3 or submit.poll() is not None,
                     attempts=600, interval=0.05)
                if submit.poll() is not None:
                    break
                victim = workers.pop(0)
                podman("kill", "--signal", "KILL", victim, check=False)
                kills += 1
                workers.append(worker())
            output, _ = submit.communicate(timeout=HANG)
        finally:
            if submit.poll() is None:
                submit.kill()
                submit.communicate()
        self.assertEqual(submit.returncode, 0, f"submit failed:\n{output}")
        self.assertEqual(kills, 2, "every kill landed while the batch ran")
        finals = [p for p in sink.iterdir() if not p.name.startswith(".")]
        broken = [p.name for p in finals if not image_is_whole(p)]
        self.assertEqual(broken, [], "files under their final names that are not whole images")
        # At least one output per item: a worker killed after its output was linked but before its result reached
        # the coordinator leaves that output, and the retry writes the item again under the next free name.
        self.assertGreaterEqual(len(finals), count, f"an output per item:\n{sorted(p.name for p in finals)}\n{output}")
