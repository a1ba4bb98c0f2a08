"""What the container tests share: podman, the images under test, and cleaning up what a test started.

scripts/test-containers sets the environment these read:
  SHIFTWORK_TEST_IMAGE         the image built from the repository's Dockerfile (e.g. localhost/shiftwork:test)
  SHIFTWORK_TEST_PHOTO_IMAGE   the photo server (Tests/Containers/photo-server)
  SHIFTWORK_BINARY             the host's `shiftwork` (the debug build), for clients on the host
  SHIFTWORK_TEST_RUN           a name unique to this run: every container, network, volume and compose project
                               a test makes carries it, and the script removes whatever is left with it
  KUBECTL                      kubectl with kustomize (scripts/setup-python's venv)
  CONTAINERS_CONF              podman's settings for this machine (scripts/containers-env)
"""
import json
import os
import pathlib
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
IMAGE = os.environ.get("SHIFTWORK_TEST_IMAGE", "localhost/shiftwork:test")
PHOTO_IMAGE = os.environ.get("SHIFTWORK_TEST_PHOTO_IMAGE", "localhost/shiftwork-test-photos:latest")
BINARY = os.environ.get("SHIFTWORK_BINARY", str(REPOSITORY / ".build/debug/shiftwork"))
RUN = os.environ.get("SHIFTWORK_TEST_RUN", "swtest-" + secrets.token_hex(3))
LABEL = f"shiftwork-test-run={RUN}"
# The image's user (Dockerfile: useradd --uid 10001).
IMAGE_UID = 10001
# A guard against a hung command, not a measure: a step that takes this long has failed.
HANG = 300


def run(arguments, timeout=HANG, check=False, env=None, input=None):
    """Runs a command; returns the CompletedProcess with stdout and stderr as text (stderr folded into stdout)."""
    completed = subprocess.run(arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout, env=env, input=input)
    if check and completed.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, arguments))} exited {completed.returncode}:\n{completed.stdout}")
    return completed


def podman(*arguments, timeout=HANG, check=True):
    return run(["podman", *map(str, arguments)], timeout=timeout, check=check)


def free_port():
    """A free TCP port on 127.0.0.1 (for publishing a container port to the host's loopback)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=10):
    """(status, body) of a GET, or (None, reason) when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as error:
        return None, str(error)


def poll(what, probe, attempts=240, interval=0.5):
    """Calls probe() until it returns something true; returns it, or fails naming `what` (a hang guard)."""
    last = None
    for _ in range(attempts):
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"{what}: not reached after {attempts} attempts (last: {last!r})")


def state(container):
    """podman inspect's State of a container (Status, ExitCode, Running, RestartCount, …)."""
    out = podman("inspect", "--format", "{{json .State}}", container, check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def pair_state(returncode, output):
    """What a coordinator of a pair is, from `shiftwork status --json`'s exit status and output (stderr folded in):
    the `pair` object's state when the reply has one; else "active" when it answered, "passive" when it refused as
    the passive one of its pair, "starting" when it refused as still starting; None when nothing answered."""
    if returncode == 0:
        try:
            status = json.loads(output[output.index("{"):])
        except (ValueError, json.JSONDecodeError):
            return None
        pair = status.get("pair") if isinstance(status, dict) else None
        return (pair.get("state") if isinstance(pair, dict) else None) or "active"
    # Refused: "this coordinator is the passive one of a pair; …", or, its peer silent, "… of a pair is not active".
    if "passive one of a pair" in output or "of a pair is not active" in output:
        return "passive"
    if "of a pair is starting" in output:
        return "starting"
    return None


def restart_count(container):
    out = podman("inspect", "--format", "{{.RestartCount}}", container, check=False)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() else None


class ContainerTestCase(unittest.TestCase):
    """A test that starts containers: names each thing it makes after the run, and removes it afterwards,
    also when the test fails (tearDown runs on failure; scripts/test-containers sweeps the run's label too)."""

    def setUp(self):
        self.scratch = pathlib.Path(tempfile.mkdtemp(prefix=f"{RUN}-"))
        self.containers, self.networks, self.volumes = [], [], []
        self.compose_projects = []

    def tearDown(self):
        for project in reversed(self.compose_projects):
            remove_compose_project(project)
        for container in reversed(self.containers):
            podman("rm", "-f", "-t", "0", container, check=False)
        for volume in self.volumes:
            podman("volume", "rm", "-f", volume, check=False)
        for network in self.networks:
            podman("network", "rm", "-f", network, check=False)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def name(self, what):
        return f"{RUN}-{what}-{secrets.token_hex(2)}"

    def network(self):
        name = self.name("net")
        podman("network", "create", "--label", LABEL, name)
        self.networks.append(name)
        return name

    def volume(self):
        name = self.name("vol")
        podman("volume", "create", "--label", LABEL, name)
        self.volumes.append(name)
        return name

    def start(self, what, *arguments, image=IMAGE, detach=True):
        """`podman run -d OPTIONS… IMAGE ARGUMENTS…`, given as OPTIONS…, "--", ARGUMENTS…, with the run's label;
        returns the container's name (removed in tearDown)."""
        name = self.name(what)
        self.containers.append(name)
        podman("run", *(["-d"] if detach else []), "--name", name, "--label", LABEL,
               *arguments_before_image(arguments), image, *arguments_after_image(arguments))
        return name

    def run_once(self, *arguments, image=IMAGE, timeout=HANG):
        """`podman run --rm` to completion: (exit status, output)."""
        name = self.name("once")
        self.containers.append(name)
        completed = run(["podman", "run", "--rm", "--name", name, "--label", LABEL,
                         *arguments_before_image(arguments), image, *arguments_after_image(arguments)], timeout=timeout)
        return completed.returncode, completed.stdout

    def photo_server(self, network, alias="photos"):
        """The sample photos served at http://ALIAS:8000/ on `network` (the workers' side, a private address)."""
        name = self.start("photos", "--network", network, "--network-alias", alias, "--", image=PHOTO_IMAGE)
        poll(f"the photo server {name}", lambda: "Serving HTTP" in podman("logs", name, check=False).stdout)
        return name

    def host_shiftwork(self, *arguments, timeout=HANG, env=None):
        """The host's shiftwork (a client of the published port): (exit status, output)."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("SHIFTWORK_")}
        environment.update(env or {})
        completed = run([BINARY, *map(str, arguments)], timeout=timeout, env=environment)
        return completed.returncode, completed.stdout


def arguments_before_image(arguments):
    """podman options: the arguments before a "--" separator (the image goes there)."""
    arguments = list(map(str, arguments))
    return arguments[:arguments.index("--")] if "--" in arguments else arguments


def arguments_after_image(arguments):
    """The container's arguments: those after "--"."""
    arguments = list(map(str, arguments))
    return arguments[arguments.index("--") + 1:] if "--" in arguments else []


def compose_logs(project, tail=40):
    """The last `tail` lines of each container podman-compose made for `project`, for a failing test's message."""
    names = podman("ps", "-a", "--format", "{{.Names}}", "--filter", f"label=io.podman.compose.project={project}",
                   check=False).stdout.split()
    return "\n".join(f"--- {n}:\n{podman('logs', '--tail', str(tail), n, check=False).stdout}" for n in names)


def remove_compose_project(project):
    """Everything podman-compose made for `project`: containers, pods, networks and volumes (by its label)."""
    label = f"io.podman.compose.project={project}"
    ids = podman("ps", "-a", "-q", "--filter", f"label={label}", check=False).stdout.split()
    if ids:
        podman("rm", "-f", "-t", "0", *ids, check=False)
    for pod in podman("pod", "ps", "-q", "--filter", f"label={label}", check=False).stdout.split():
        podman("pod", "rm", "-f", pod, check=False)
    for network in podman("network", "ls", "-q", "--filter", f"label={label}", check=False).stdout.split():
        podman("network", "rm", "-f", network, check=False)
    for volume in podman("volume", "ls", "-q", "--filter", f"label={label}", check=False).stdout.split():
        podman("volume", "rm", "-f", volume, check=False)
