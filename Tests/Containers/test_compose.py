"""compose.yaml with compose.single.yaml (one coordinator, coordinator-a, no pair), and with compose.curve.yaml too,
brought up for real with podman-compose, from the image the Dockerfile builds: three workers (the file's deploy.replicas), a batch of the sample photos submitted from the host
through the published port, one worker killed mid-batch (every item comes back exactly once), the coordinator's
container restarted (its journal on the volume keeps the finished batch: `status BATCH`, `results BATCH`), then
every container stopped, workers first, each exiting 0 within its stop_grace_period. The pair (compose.yaml as it is)
is test_compose_pair.py."""
import json
import os
import re
import subprocess
import unittest

import yaml

from support import (BINARY, HANG, IMAGE, IMAGE_UID, PHOTO_IMAGE, REPOSITORY, RUN, ContainerTestCase, free_port, podman,
                     compose_logs, poll, run, state)

PHOTOS = ["coffee.jpg", "rocket.jpg", "chelsea.png", "cameraman.png"]
COPIES = 25
# Seconds the photo server waits before each response: the batch (100 items over the workers' slots) then lasts
# a few seconds at least, time to kill a worker while it runs.
PHOTO_DELAY = 0.5


def seconds(duration):
    """A compose duration (`10s`, `1m30s`) in seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    return sum(float(n) * units[u] for n, u in re.findall(r"([0-9.]+)(ms|h|m|s)", str(duration)))


class ComposeTests(ContainerTestCase):
    def test_compose_yaml_single(self):
        self.run_cluster(["compose.yaml", "compose.single.yaml"], keys=None)

    def test_compose_yaml_with_curve(self):
        keys = self.scratch / "keys"
        for name in ["coordinator", "worker", "client"]:
            completed = run([BINARY, "keygen", name, "--out", str(keys)])
            self.assertEqual(completed.returncode, 0, completed.stdout)
        # As docs/deployment.md says: the image's user reads the secret keys it mounts.
        for name in ["coordinator.key", "worker.key"]:
            os.chown(keys / name, IMAGE_UID, IMAGE_UID)
        self.run_cluster(["compose.yaml", "compose.curve.yaml", "compose.single.yaml"], keys=keys)

    # ------------------------------------------------------------------------------------------------------

    def compose(self, *arguments, timeout=HANG):
        completed = run(["podman-compose", "-p", self.project, *sum((["-f", str(f)] for f in self.files), []), *arguments],
                        env=self.environment, timeout=timeout)
        self.assertEqual(completed.returncode, 0, f"podman-compose {' '.join(arguments)}:\n{completed.stdout}")
        return completed.stdout

    def client(self, *arguments, timeout=HANG):
        """The host's shiftwork against the published port (with the client's keys under CurveZMQ)."""
        keys = ["--secret-key", str(self.keys / "client.key"), "--coordinator-key", str(self.keys / "coordinator.pub")] if self.keys else []
        return self.host_shiftwork(*arguments, "--coordinator", f"tcp://127.0.0.1:{self.port}", *keys, timeout=timeout)

    def status(self):
        code, output = self.client("status", "--json", timeout=60)
        try:
            return json.loads(output) if code == 0 else None
        except json.JSONDecodeError:
            return None

    def logs(self):
        return compose_logs(self.project)

    def run_cluster(self, files, keys):
        self.project = re.sub(r"[^a-z0-9]", "", f"{RUN}{len(files)}".lower())
        self.compose_projects.append(self.project)
        self.keys = keys
        self.port = free_port()
        photos = self.scratch / "photos.yaml"
        photos.write_text(f"services:\n  photos:\n    image: {PHOTO_IMAGE}\n    environment:\n      PHOTO_DELAY: \"{PHOTO_DELAY}\"\n")
        self.files = [REPOSITORY / f for f in files] + [photos]
        self.environment = dict(os.environ, SHIFTWORK_IMAGE=IMAGE, SHIFTWORK_PORT=str(self.port))
        if keys:
            self.environment["SHIFTWORK_KEYS"] = str(keys)
        definition = yaml.safe_load((REPOSITORY / "compose.yaml").read_text())["services"]
        single = yaml.safe_load((REPOSITORY / "compose.single.yaml").read_text())["services"]
        self.assertEqual(single["coordinator-b"]["deploy"]["replicas"], 0, "compose.single.yaml starts no coordinator-b")
        replicas = definition["worker"]["deploy"]["replicas"]
        self.assertEqual(replicas, 3, "compose.yaml's deploy.replicas (this test expects the three workers it starts)")

        self.compose("up", "-d", "--no-build")
        coordinator = f"{self.project}_coordinator-a_1"
        workers = [f"{self.project}_worker_{n}" for n in range(1, replicas + 1)]
        self.assertIsNone(state(f"{self.project}_coordinator-b_1"), "compose.single.yaml: no coordinator-b container")
        for container in [coordinator, *workers]:
            self.assertTrue((state(container) or {}).get("Running"), f"{container} is not running:\n{self.logs()}")
        # The coordinator's health check, as compose runs it (podman-compose 1.0.3 does not: here by hand).
        test = definition["coordinator-a"]["healthcheck"]["test"]
        self.assertEqual(test[0], "CMD-SHELL")
        check = ["sh", "-c", test[1]]
        poll("the coordinator's health check", lambda: podman("exec", coordinator, *check, check=False).returncode == 0)
        poll("three workers registered", lambda: len((self.status() or {}).get("workers", [])) == replicas)

        # A batch from the host; the photos come from the server on the compose network.
        urls = [f"http://photos:8000/{name}?copy={copy}" for copy in range(COPIES) for name in PHOTOS]
        out = self.scratch / f"out-{self.project}"
        keys_arguments = ["--secret-key", str(keys / "client.key"), "--coordinator-key", str(keys / "coordinator.pub")] if keys else []
        environment = {k: v for k, v in os.environ.items() if not k.startswith("SHIFTWORK_")}
        submit = subprocess.Popen([BINARY, "submit", *urls, "--out", str(out), "--json",
                                   "--coordinator", f"tcp://127.0.0.1:{self.port}", *keys_arguments],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
        try:
            # Mid-batch: some items done, not all; then one worker is killed (SIGKILL: no goodbye).
            def some_done():
                batches = (self.status() or {}).get("batches", [])
                return batches and 0 < batches[0]["succeeded"] < len(urls) and batches[0]
            batch = poll("the batch under way", some_done, attempts=1200, interval=0.1)
            podman("kill", "--signal", "KILL", workers[1])
            stdout, stderr = submit.communicate(timeout=HANG)
        finally:
            if submit.poll() is None:
                submit.kill()
                submit.communicate()
        self.assertEqual(submit.returncode, 0, f"submit failed:\n{stdout}\n{stderr}\n{self.logs()}")
        summary = json.loads(stdout)
        self.assertEqual(summary["succeeded"], len(urls), f"{stdout}\n{stderr}")
        indexes = [item["index"] for item in summary["items"]]
        self.assertEqual(sorted(indexes), list(range(len(urls))), "every item once, none twice")
        outputs = sorted(p.name for p in out.iterdir())
        self.assertEqual(len(outputs), len(urls), outputs)
        batch_id = summary["batch"]
        self.assertEqual(batch_id, batch["id"])

        # The coordinator's container restarted: the journal on its volume still has the finished batch.
        grace = seconds(definition["coordinator-a"]["stop_grace_period"])
        podman("restart", "-t", int(grace), coordinator)
        poll("the restarted coordinator's health check", lambda: podman("exec", coordinator, *check, check=False).returncode == 0)
        code, output = self.client("status", batch_id, "--json")
        self.assertEqual(code, 0, f"{output}\n{self.logs()}")
        carried = next(b for b in json.loads(output)["batches"] if b["id"] == batch_id)
        self.assertEqual((carried["items"], carried["succeeded"], carried["failed"]), (len(urls), len(urls), 0), output)
        again = self.scratch / f"results-{self.project}"
        code, output = self.client("results", batch_id, "--out", str(again))
        self.assertEqual(code, 0, output)
        self.assertEqual(len(list(again.iterdir())), len(urls), output)

        # Stopped in compose's order (dependents first), each within its stop_grace_period, each exiting 0.
        for service, containers in [("worker", workers), ("coordinator-a", [coordinator])]:
            grace = seconds(definition[service]["stop_grace_period"])
            for container in containers:
                before = state(container)
                if not before["Running"]:
                    # The killed worker, when its restart policy did not bring it back.
                    self.assertEqual(container, workers[1], f"{container} was not running:\n{self.logs()}")
                    continue
                podman("stop", "-t", int(grace), container, timeout=grace + 60)
                after = state(container)
                self.assertEqual(after["ExitCode"], 0,
                                 f"{container} exited {after['ExitCode']} (137: killed after its {grace} s stop_grace_period)\n"
                                 f"{podman('logs', '--tail', '30', container, check=False).stdout}")


if __name__ == "__main__":
    unittest.main()
