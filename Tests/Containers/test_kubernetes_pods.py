"""The pod templates of every overlay of deploy/kubernetes, run in the built image as the kubelet would run them
(there is no cluster here): each container with its args, its environment (valueFrom resolved as the kubelet
does), its user, its volumes (claims as fresh volumes owned by the pod's fsGroup, Secrets and ConfigMaps as files
made with `shiftwork keygen`), on a network where the coordinator answers to its Services' names; then every
probe is run (exec in the container, HTTP from the host on the published port) until it passes, and each pod is
stopped with its terminationGracePeriodSeconds and must exit 0. A wrong flag, variable, path or port fails here.

The coordinator's StatefulSet is a pair (docs/failover.md): both pods run (ordinal 0 the primary, 1 the backup, each
reaching the other by its name under the headless Service, as `POD.SERVICE`), one becomes active and the other
passive; then the active pod's container is killed (SIGKILL, as a node that dies) and the other must become active
and the workers ready again through it."""
import json
import math
import os
import subprocess
import unittest

import yaml

from support import (BINARY, HANG, IMAGE, REPOSITORY, ContainerTestCase, free_port, http_get, pair_state, podman,
                     poll, run, state)

KUBECTL = os.environ.get("KUBECTL", "kubectl")
PROBES = ["startupProbe", "readinessProbe", "livenessProbe"]


def render(overlay):
    completed = run([KUBECTL, "kustomize", str(REPOSITORY / "deploy/kubernetes/overlays" / overlay)])
    if completed.returncode != 0:
        raise AssertionError(f"kubectl kustomize overlays/{overlay}:\n{completed.stdout}")
    return [o for o in yaml.safe_load_all(completed.stdout) if o]


def overlays():
    folder = REPOSITORY / "deploy/kubernetes/overlays"
    return sorted(p.name for p in folder.iterdir() if (p / "kustomization.yaml").exists())


class KubernetesPodTests(ContainerTestCase):
    def test_every_overlay_runs_its_pods_and_passes_their_probes(self):
        for overlay in overlays():
            with self.subTest(overlay=overlay):
                try:
                    self.run_overlay(overlay)
                finally:
                    # Each overlay's containers, volumes and files go before the next starts.
                    self.tearDown()
                    self.setUp()

    def key_objects(self):
        """The Secrets and ConfigMaps the curve component names, made as docs/deployment.md says (keygen)."""
        keys = self.scratch / "keys"
        for name in ["coordinator", "worker", "client"]:
            completed = run([BINARY, "keygen", name, "--out", str(keys)])
            self.assertEqual(completed.returncode, 0, completed.stdout)
        read = lambda name: (keys / name).read_bytes()
        return {
            ("Secret", "shiftwork-coordinator-key"): {"coordinator.key": read("coordinator.key"), "coordinator.pub": read("coordinator.pub")},
            ("Secret", "shiftwork-worker-key"): {"worker.key": read("worker.key")},
            ("ConfigMap", "shiftwork-public-keys"): {n: read(n) for n in ["coordinator.pub", "worker.pub", "client.pub"]},
        }

    def volume_arguments(self, pod_name, spec, container, claims, objects, group):
        """podman -v arguments for the container's volumeMounts."""
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        arguments = []
        for mount in container.get("volumeMounts", []):
            name, path, read_only = mount["name"], mount["mountPath"], mount.get("readOnly", False)
            volume = volumes.get(name)
            if volume is None or "persistentVolumeClaim" in volume or "emptyDir" in volume:
                self.assertTrue(volume is not None or name in claims, f"{pod_name}: volumeMount {name} names no volume or claim")
                # A fresh volume, owned by the pod's user (the fsGroup's effect): podman's :U.
                arguments += ["-v", f"{self.volume()}:{path}:U{',ro' if read_only else ''}"]
                continue
            folder = self.scratch / f"{pod_name}-{name}"
            folder.mkdir()
            mode = volume.get("secret", volume.get("configMap", volume.get("projected", {}))).get("defaultMode", 0o644)
            sources = [volume] if "projected" not in volume else volume["projected"]["sources"]
            for source in sources:
                kind, reference = ("Secret", source["secret"]) if "secret" in source else ("ConfigMap", source["configMap"])
                name_key = "secretName" if "secretName" in reference else "name"
                data = objects.get((kind, reference[name_key]))
                self.assertIsNotNone(data, f"{pod_name}: volume {name} needs the {kind} {reference[name_key]}, which docs/deployment.md does not make")
                items = reference.get("items") or [{"key": k, "path": k} for k in data]
                for item in items:
                    self.assertIn(item["key"], data, f"{pod_name}: {kind} {reference[name_key]} has no key {item['key']}")
                    (folder / item["path"]).write_bytes(data[item["key"]])
                    os.chown(folder / item["path"], 0, group)
                    (folder / item["path"]).chmod(mode)
            arguments += ["-v", f"{folder}:{path}:ro"]
        return arguments

    def environment_arguments(self, pod_name, container):
        arguments = []
        for variable in container.get("env", []):
            if "valueFrom" not in variable:
                arguments += ["-e", f"{variable['name']}={variable.get('value', '')}"]
                continue
            source = variable["valueFrom"]
            if "fieldRef" in source:
                self.assertEqual(source["fieldRef"]["fieldPath"], "metadata.name", variable)
                value = pod_name
            elif "resourceFieldRef" in source:
                reference = source["resourceFieldRef"]
                section, resource = reference["resource"].split(".")
                quantity = str(container["resources"][section][resource])
                cpus = float(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)
                value = str(math.ceil(cpus / float(reference.get("divisor", 1))))
            else:
                self.fail(f"{pod_name}: {variable['name']}: valueFrom {source} is not emulated by this test")
            arguments += ["-e", f"{variable['name']}={value}"]
        return arguments

    def run_overlay(self, overlay):
        objects = render(overlay)
        keys = self.key_objects()
        network = self.network()
        workloads = [o for o in objects if o["kind"] in ("StatefulSet", "Deployment")]
        services = [o for o in objects if o["kind"] == "Service"]
        started = []
        coordinators = []
        # The coordinators first (as their Services make them reachable), then the workers.
        pods = []
        for workload in sorted(workloads, key=lambda o: o["kind"] != "StatefulSet"):
            if workload["kind"] == "StatefulSet":
                # Every replica, named by its ordinal, as the StatefulSet controller names them.
                pods += [(workload, f"{workload['metadata']['name']}-{n}") for n in range(workload["spec"].get("replicas", 1))]
            else:
                pods.append((workload, workload["metadata"]["name"] + "-7d9f8-x1"))
        for workload, pod_name in pods:
            template = workload["spec"]["template"]
            spec, labels = template["spec"], template["metadata"].get("labels", {})
            selecting = [s for s in services
                         if s["spec"].get("selector") and all(labels.get(k) == v for k, v in s["spec"]["selector"].items())]
            aliases = [s["metadata"]["name"] for s in selecting]
            # A headless Service gives each pod of a StatefulSet the name POD.SERVICE.
            aliases += [f"{pod_name}.{s['metadata']['name']}" for s in selecting
                        if s["spec"].get("clusterIP") == "None" and workload["kind"] == "StatefulSet"]
            security = spec.get("securityContext", {})
            claims = [c["metadata"]["name"] for c in workload["spec"].get("volumeClaimTemplates", [])]
            for container in spec["containers"]:
                arguments = ["--network", network, "--hostname", pod_name]
                for alias in aliases:
                    arguments += ["--network-alias", alias]
                if "runAsUser" in security:
                    arguments += ["--user", f"{security['runAsUser']}:{security.get('runAsGroup', security['runAsUser'])}"]
                if "fsGroup" in security:
                    arguments += ["--group-add", str(security["fsGroup"])]
                published = {}
                for port in container.get("ports", []):
                    published[port.get("name", port["containerPort"])] = free_port()
                    published[port["containerPort"]] = published[port.get("name", port["containerPort"])]
                    arguments += ["-p", f"127.0.0.1:{published[port['containerPort']]}:{port['containerPort']}"]
                arguments += self.environment_arguments(pod_name, container)
                arguments += self.volume_arguments(pod_name, spec, container, claims, keys, security.get("fsGroup", 0))
                if container.get("command"):
                    arguments += ["--entrypoint", container["command"][0]]
                    args = container["command"][1:] + container.get("args", [])
                else:
                    args = container.get("args", [])
                name = self.start(f"{overlay}-{container['name']}", *arguments, "--", *args)
                started.append((name, container, published, spec.get("terminationGracePeriodSeconds", 30)))
                if workload["kind"] == "StatefulSet":
                    coordinators.append(name)

        # Every probe, as the kubelet runs it, until it passes (readiness: the workers registered through the
        # coordinator's Service name).
        for name, container, published, _ in started:
            for kind in PROBES:
                probe = container.get(kind)
                if not probe:
                    continue
                what = f"overlays/{overlay}: {container['name']} {kind}"
                if "exec" in probe:
                    command = probe["exec"]["command"]
                    poll(what, lambda: podman("exec", name, *command, check=False).returncode == 0 or
                         (not state(name)["Running"] and self.fail(f"{what}: the container exited:\n{podman('logs', name, check=False).stdout}")))
                elif "httpGet" in probe:
                    port = published.get(probe["httpGet"]["port"])
                    self.assertIsNotNone(port, f"{what}: port {probe['httpGet']['port']} is not one the container declares")
                    url = f"http://127.0.0.1:{port}{probe['httpGet'].get('path', '/')}"
                    poll(f"{what} ({url})", lambda: http_get(url)[0] == 200 or
                         (not state(name)["Running"] and self.fail(f"{what}: the container exited:\n{podman('logs', name, check=False).stdout}")))
                else:
                    self.fail(f"{what}: neither exec nor httpGet")

        killed = self.kill_the_active_coordinator(overlay, coordinators, started) if len(coordinators) == 2 else None

        # Stopped as Kubernetes stops a pod (SIGTERM, then SIGKILL after the grace period): workers first.
        for name, container, _, grace in reversed(started):
            if name == killed:
                continue
            podman("stop", "-t", grace, name, timeout=grace + 60)
            exit_code = state(name)["ExitCode"]
            self.assertEqual(exit_code, 0, f"overlays/{overlay}: {container['name']} exited {exit_code} on SIGTERM "
                             f"(137: not within terminationGracePeriodSeconds {grace}):\n{podman('logs', '--tail', '30', name, check=False).stdout}")

    def kill_the_active_coordinator(self, overlay, coordinators, started):
        """The pair settles with one active and one passive coordinator; the active pod's container is killed (SIGKILL:
        a node that dies), the other takes over, and every worker is ready again, registered with it. Returns the
        killed container's name."""
        def roles():
            answers = [podman("exec", c, "shiftwork", "status", "--json", "--coordinator", "tcp://127.0.0.1:5570",
                              check=False) for c in coordinators]
            return [pair_state(answer.returncode, answer.stdout) for answer in answers]
        settled = poll(f"overlays/{overlay}: one coordinator active, the other passive",
                       lambda: sorted(r := roles()) == ["active", "passive"] and r)
        active = coordinators[settled.index("active")]
        other = coordinators[settled.index("passive")]
        podman("kill", "--signal", "KILL", active)
        poll(f"overlays/{overlay}: the passive coordinator takes over after the active pod was killed",
             lambda: roles()[coordinators.index(other)] == "active" or
             (not state(other)["Running"] and self.fail(f"{other} exited:\n{podman('logs', other, check=False).stdout}")))
        # Every worker turns to it and registers (the pods' names are their IDs), and is ready.
        workers = [(name, container, published) for name, container, published, _ in started if name not in coordinators]
        def registered():
            out = podman("exec", other, "shiftwork", "status", "--json", "--coordinator", "tcp://127.0.0.1:5570", check=False)
            try:  # as `pair_state` reads it: from the JSON's first brace (a log line may come before it)
                return len(json.loads(out.stdout[out.stdout.index("{"):]).get("workers", [])) == len(workers)
            except (ValueError, json.JSONDecodeError):
                return False
        poll(f"overlays/{overlay}: every worker registered with the coordinator that took over", registered)
        for name, container, published in workers:
            probe = (container.get("readinessProbe") or {}).get("httpGet")
            if probe:
                url = f"http://127.0.0.1:{published[probe['port']]}{probe.get('path', '/')}"
                poll(f"overlays/{overlay}: {container['name']} ready after the failover ({url})",
                     lambda: http_get(url)[0] == 200)
        return active


if __name__ == "__main__":
    unittest.main()
