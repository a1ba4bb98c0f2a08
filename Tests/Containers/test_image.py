"""The image built from the repository's Dockerfile: runs as non-root, carries runtime libraries only, and every
library the binary links or opens on first use (dlopen) is present and loads, shown by using each feature inside
the image: an AVIF encode, a download from a server on the test's network, the HTTP endpoints."""
import re
import unittest

from support import IMAGE, IMAGE_UID, REPOSITORY, ContainerTestCase, free_port, http_get, podman, poll


def dlopened_sonames():
    """The shared libraries the sources open by name (CLazyLibrary: dlopen on first use), grouped by library:
    {"libavif": ["libavif.so.16", "libavif.so.15", ...], ...}. Read from the sources, so a new one is checked too."""
    names = set()
    for path in (REPOSITORY / "Sources").rglob("*.[ch]"):
        names.update(re.findall(r'"(lib[A-Za-z0-9_+-]+\.so(?:\.[0-9]+)*)"', path.read_text(errors="replace")))
    grouped = {}
    for name in sorted(names):
        grouped.setdefault(name.split(".so")[0], []).append(name)
    return grouped


class ImageTests(ContainerTestCase):
    def shell(self, command):
        """A shell command inside the image (its entrypoint replaced), as the image's user."""
        return self.run_once("--entrypoint", "/bin/sh", "--", "-c", command)

    def test_runs_as_a_user_that_is_not_root(self):
        user = podman("image", "inspect", "--format", "{{.Config.User}}", IMAGE).stdout.strip()
        self.assertEqual(user, "shiftwork", "the image's USER")
        status, output = self.shell("id -u; id -g")
        self.assertEqual(status, 0, output)
        self.assertEqual(output.split()[0], str(IMAGE_UID), f"the image runs as uid {output.split()[0]}")
        status, output = self.run_once("--", "--version")
        self.assertEqual(status, 0, output)

    def test_carries_runtime_libraries_only(self):
        status, output = self.shell("dpkg-query -W -f '${Package}\\n' | grep -E -- '-dev$|^gcc(-[0-9]+)?$|^cpp|^clang|^g\\+\\+|^binutils|^git$|^swift' || true; "
                                    "ls /usr/bin/swift* 2>/dev/null || true")
        self.assertEqual(status, 0, output)
        self.assertEqual(output.strip(), "", f"build tools or headers in the runtime image:\n{output}")

    def test_the_binary_is_stripped(self):
        # An unstripped ELF file has a .symtab section; its name is in the section header string table.
        status, output = self.shell("if grep -q -a '\\.symtab' /usr/local/bin/shiftwork; then echo symtab; else echo stripped; fi")
        self.assertEqual(status, 0, output)
        self.assertEqual(output.strip(), "stripped", "the binary keeps its symbol table (strip it in the build stage)")

    def test_every_linked_and_dlopened_library_is_present_and_resolves(self):
        status, output = self.shell("ldd /usr/local/bin/shiftwork")
        self.assertEqual(status, 0, output)
        self.assertNotIn("not found", output, f"the binary links libraries the image lacks:\n{output}")
        groups = dlopened_sonames()
        self.assertTrue({"libcurl", "libavif", "libmicrohttpd", "libcrypto"} <= set(groups),
                        f"the sources' dlopen names changed: {groups}")
        for library, names in groups.items():
            # The loader's own search: ldconfig's cache, as dlopen uses it.
            script = "; ".join(f"ldconfig -p | grep -F '\t{name} (' | head -n 1" for name in names)
            status, output = self.shell(script)
            self.assertEqual(status, 0, output)
            found = re.findall(r"=> (\S+)", output)
            self.assertTrue(found, f"{library}: none of {names} is installed in the image (the feature that opens it fails)")
            status, output = self.shell(f"ldd {found[0]}")
            self.assertEqual(status, 0, output)
            self.assertNotIn("not found", output, f"{found[0]} (dlopened) needs libraries the image lacks:\n{output}")

    def test_encodes_avif(self):
        out = self.scratch / "out"
        out.mkdir()
        out.chmod(0o777)
        status, output = self.run_once("-v", f"{REPOSITORY / 'samples'}:/in:ro", "-v", f"{out}:/out",
                                       "--", "tiltshift", "/in/coffee.jpg", "/out/coffee.avif")
        self.assertEqual(status, 0, f"tiltshift to AVIF in the image failed:\n{output}")
        data = (out / "coffee.avif").read_bytes()
        self.assertEqual(data[4:12], b"ftypavif", f"not an AVIF file (starts {data[:16]!r})")

    def test_downloads_from_a_server_on_its_network(self):
        network = self.network()
        self.photo_server(network)
        out = self.scratch / "out"
        out.mkdir()
        out.chmod(0o777)
        status, output = self.run_once("--network", network, "-v", f"{out}:/out",
                                       "--", "run", "http://photos:8000/rocket.jpg", "http://photos:8000/chelsea.png",
                                       "--out", "/out")
        self.assertEqual(status, 0, f"shiftwork run over HTTP in the image failed:\n{output}")
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["chelsea.png", "rocket.jpg"], output)

    def test_serves_metrics_and_health_over_http(self):
        network = self.network()
        metrics, health = free_port(), free_port()
        coordinator = self.start("coordinator", "--network", network, "--network-alias", "coordinator",
                                 "-p", f"127.0.0.1:{metrics}:9464",
                                 "-e", "SHIFTWORK_INSECURE=1", "-e", "SHIFTWORK_LISTEN=tcp://0.0.0.0:5570",
                                 "-e", "SHIFTWORK_METRICS_LISTEN=*:9464", "--", "coordinator")
        worker = self.start("worker", "--network", network, "-p", f"127.0.0.1:{health}:8080",
                            "-e", "SHIFTWORK_COORDINATOR=tcp://coordinator:5570",
                            "-e", "SHIFTWORK_HEALTH_LISTEN=*:8080", "--", "worker")
        page = poll("the coordinator's /metrics", lambda: (lambda r: r[1] if r[0] == 200 else None)(
            http_get(f"http://127.0.0.1:{metrics}/metrics")))
        self.assertIn("shiftwork_tasks_queued", page)
        ready = poll("the worker's /readyz (registered)", lambda: (lambda r: r if r[0] == 200 else None)(
            http_get(f"http://127.0.0.1:{health}/readyz")))
        self.assertIn("ready", ready[1])
        self.assertEqual(http_get(f"http://127.0.0.1:{health}/livez")[0], 200)
        for container in (worker, coordinator):
            podman("stop", "-t", "20", container)
            self.assertEqual(podman("inspect", "--format", "{{.State.ExitCode}}", container).stdout.strip(), "0",
                             podman("logs", container, check=False).stdout)


if __name__ == "__main__":
    unittest.main()
