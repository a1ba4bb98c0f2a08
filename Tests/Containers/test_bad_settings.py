"""A container started with a wrong or missing setting exits non-zero at once, with a message that names the
setting and its variable; compose's restart policy gives up on it (it stays exited, with its status and message)
instead of restarting it for ever."""
import os
import unittest

from support import (BINARY, IMAGE, IMAGE_UID, REPOSITORY, RUN, ContainerTestCase, free_port, podman, poll,
                     restart_count, run, state)


class BadSettingTests(ContainerTestCase):
    def assertFailsNaming(self, status, output, *names):
        self.assertNotEqual(status, 0, f"the container did not fail:\n{output}")
        for name in names:
            self.assertIn(name, output, f"the message does not name {name}:\n{output}")

    def test_a_worker_without_a_coordinator_address(self):
        status, output = self.run_once("--", "worker")
        self.assertFailsNaming(status, output, "SHIFTWORK_COORDINATOR", "--coordinator")

    def test_a_worker_whose_key_file_is_not_there(self):
        status, output = self.run_once("-e", "SHIFTWORK_COORDINATOR=tcp://coordinator:5570",
                                       "-e", "SHIFTWORK_SECRET_KEY=/run/shiftwork/keys/worker.key",
                                       "-e", "SHIFTWORK_COORDINATOR_KEY=/run/shiftwork/keys/coordinator.pub", "--", "worker")
        self.assertFailsNaming(status, output, "SHIFTWORK_SECRET_KEY", "/run/shiftwork/keys/worker.key")

    def test_a_coordinator_whose_key_files_are_not_there(self):
        status, output = self.run_once("-e", "SHIFTWORK_SECRET_KEY=/run/shiftwork/keys/coordinator.key",
                                       "-e", "SHIFTWORK_ALLOW_KEYS=/run/shiftwork/keys", "--", "coordinator")
        self.assertFailsNaming(status, output, "SHIFTWORK_SECRET_KEY", "/run/shiftwork/keys/coordinator.key")

    def test_a_coordinator_whose_allow_list_is_not_there(self):
        keys = self.scratch / "keys"
        completed = run([BINARY, "keygen", "coordinator", "--out", str(keys)])
        self.assertEqual(completed.returncode, 0, completed.stdout)
        (keys / "coordinator.key").chmod(0o600)
        os.chown(keys / "coordinator.key", IMAGE_UID, IMAGE_UID)
        status, output = self.run_once("-v", f"{keys / 'coordinator.key'}:/run/shiftwork/keys/coordinator.key:ro",
                                       "-e", "SHIFTWORK_SECRET_KEY=/run/shiftwork/keys/coordinator.key",
                                       "-e", "SHIFTWORK_ALLOW_KEYS=/run/shiftwork/allowed", "--", "coordinator")
        self.assertFailsNaming(status, output, "SHIFTWORK_ALLOW_KEYS", "/run/shiftwork/allowed")

    def test_a_worker_whose_sink_directory_is_not_mounted(self):
        arguments = ["-e", "SHIFTWORK_COORDINATOR=tcp://coordinator:5570", "-e", "SHIFTWORK_SINK_DIR=/srv/shiftwork/outputs"]
        status, output = self.run_once(*arguments, "--", "worker")
        self.assertFailsNaming(status, output, "SHIFTWORK_SINK_DIR", "/srv/shiftwork/outputs")
        # Mounted read-only: named too.
        volume = self.volume()
        status, output = self.run_once("-v", f"{volume}:/srv/shiftwork/outputs:ro", *arguments, "--", "worker")
        self.assertFailsNaming(status, output, "SHIFTWORK_SINK_DIR", "writable")
        # Mounted and writable: the worker starts (and waits for its coordinator), so the checks above can fail.
        outputs = self.scratch / "outputs"
        outputs.mkdir()
        os.chown(outputs, IMAGE_UID, IMAGE_UID)
        worker = self.start("worker", "-v", f"{outputs}:/srv/shiftwork/outputs", *arguments, "--", "worker")
        poll("the worker with its sink directory mounted", lambda: "worker" in podman("logs", worker, check=False).stdout)
        self.assertTrue(state(worker)["Running"], podman("logs", worker, check=False).stdout)

    def test_compose_gives_up_on_a_worker_that_cannot_start(self):
        """compose.yaml's restart policy (on-failure with a maximum): a worker without a coordinator address is
        retried a few times, then stays exited with status 1 and its message, instead of restarting for ever."""
        project = f"{RUN}-bad".replace("-", "")
        self.compose_projects.append(project)
        override = self.scratch / "no-coordinator.yaml"
        override.write_text("services:\n  worker:\n    environment:\n      SHIFTWORK_COORDINATOR: \"\"\n")
        environment = dict(os.environ, SHIFTWORK_IMAGE=IMAGE, SHIFTWORK_PORT=str(free_port()),
                           SHIFTWORK_PORT_B=str(free_port()))
        up = run(["podman-compose", "-p", project, "-f", str(REPOSITORY / "compose.yaml"), "-f", str(override),
                  "up", "-d", "--no-build"], env=environment)
        self.assertEqual(up.returncode, 0, up.stdout)
        worker = f"{project}_worker_1"
        policy = podman("inspect", "--format", "{{.HostConfig.RestartPolicy.Name}} {{.HostConfig.RestartPolicy.MaximumRetryCount}}",
                        worker).stdout.split()
        self.assertEqual(policy[0], "on-failure", f"compose.yaml's worker restart policy: {policy}")
        retries = int(policy[1])
        self.assertGreater(retries, 0, "on-failure without a maximum restarts for ever")
        # Exited, and no more restarts to come.
        final = poll(f"{worker} given up on", lambda: (lambda s: s if s and s["Status"] == "exited"
                                                         and restart_count(worker) == retries else None)(state(worker)),
                     attempts=600)
        self.assertEqual(final["ExitCode"], 1, final)
        self.assertIn("SHIFTWORK_COORDINATOR", podman("logs", worker, check=False).stdout)


if __name__ == "__main__":
    unittest.main()
