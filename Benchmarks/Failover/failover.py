#!/usr/bin/env python3
"""The coordinator pair measured (issue #31, docs/failover.md). A measurement, never a test: it prints figures;
those of record go in docs/benchmarks.md, "Coordinator pair".

    scripts/bench-failover                      # builds shiftwork and ClusterBenchmark (release), runs all of it
    SKIP_BUILD=1 BENCH_BIN=.build/release scripts/bench-failover
    python3 Benchmarks/Failover/failover.py --bin DIR [--kills 20] [--repeat 3] [--skip-failover] [--skip-cost]

Everything runs on this machine, on 127.0.0.1, with `--insecure`, each coordinator with a `--data-dir` of its own
in a temporary directory (removed at the end); every process it starts, it stops (also on Ctrl-C or an error).

(a) Failover time, under load. A pair (`--ha primary|backup`, `--failover-timeout $FAILOVER_TIMEOUT`, default 2 s)
    and two workers (`--slots 4`) given both coordinators; a photo origin (Python's http.server) serving a small
    PNG. Per round: `shiftwork submit` of ITEMS copies of it (a query string each: distinct items) naming both
    coordinators; once LOADED items are reported done, the active coordinator (the one whose `status` answers: the
    passive one refuses) is killed with SIGKILL. Then the other's `status BATCH` is polled: the first answer is its
    takeover, and the first growth of the batch's succeeded count after that is the first result through it (the
    workers turned to it and ran a task). submit's own lines cannot time that: it may print results the killed one
    sent before it died, late. The round's batch must then finish with every item once (submit follows the batch;
    `results BATCH` if it gave up); the killed coordinator is started again (same role, same data directory: it
    comes back passive) and the round ends when the active one logs that its peer holds its whole journal (caught
    up). p50 and p99 over --kills rounds (the kills alternate between the two); polling adds up to one `status`
    call (about 0.1-0.3 s under load) to each figure.

(b) Cost of replication, same sitting, alternated --repeat times: (1) no-op tasks/s through ClusterBenchmark
    (its throughput mode: $NOOP_TASKS no-op tasks, two workers of 64 slots) against a single coordinator with
    --data-dir, then against the active coordinator of a pair; (2) the end-to-end photo run: `shiftwork submit` of
    the four photos in samples/ × $PHOTO_COPIES from the local origin, two workers, single vs pair, photos/s.
    Prints each run, min and median, and the ratio of medians (goal >= 0.9).

The machine's load average is printed at the start and the end of each part: on a shared machine, figures taken
under load say so.
"""
import argparse
import json
import os
import pathlib
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
FAILOVER_TIMEOUT = os.environ.get("FAILOVER_TIMEOUT", "2")
ITEMS = int(os.environ.get("ITEMS", "600"))
LOADED = int(os.environ.get("LOADED", "60"))
NOOP_TASKS = int(os.environ.get("NOOP_TASKS", "50000"))
PHOTO_COPIES = int(os.environ.get("PHOTO_COPIES", "10"))
# A guard against a hung step (a measurement that takes this long has failed), never a figure.
HANG = 600


def load():
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


class Processes:
    """Every process the benchmark starts, stopped at the end (SIGTERM, then SIGKILL)."""

    def __init__(self, scratch):
        self.scratch = scratch
        self.running = []

    def start(self, name, arguments, env=None):
        log = open(self.scratch / f"{name}-{len(self.running)}.log", "w")
        # Info: the coordinators' log says when a passive peer holds the whole journal (caught up).
        environment = dict(os.environ, SHIFTWORK_ALLOW_SOURCE_NETWORKS="127.0.0.0/8", SHIFTWORK_LOG_LEVEL="info")
        environment.update(env or {})
        process = subprocess.Popen(arguments, stdout=log, stderr=subprocess.STDOUT, env=environment)
        process.log_path = log.name
        self.running.append(process)
        return process

    def stop(self, process):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop_all(self):
        for process in reversed(self.running):
            self.stop(process)
        self.running = []


class Origin:
    """Python's http.server over a directory, on 127.0.0.1, in a thread of this process."""

    def __init__(self, directory):
        handler = lambda *a, **k: SimpleHTTPRequestHandler(*a, directory=str(directory), **k)
        SimpleHTTPRequestHandler.log_message = lambda *a: None
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()


class Bench:
    def __init__(self, binary_directory, scratch):
        self.bin = str(pathlib.Path(binary_directory) / "shiftwork")
        self.cluster_benchmark = str(pathlib.Path(binary_directory) / "ClusterBenchmark")
        self.scratch = scratch
        self.processes = Processes(scratch)

    # -------------------------------------------------------------- a coordinator, a pair, workers

    def coordinator(self, name, port, data, pair=None):
        arguments = [self.bin, "coordinator", "--listen", f"tcp://127.0.0.1:{port}", "--insecure", "--data-dir", str(data)]
        if pair:
            role, listen, peer = pair
            arguments += ["--ha", role, "--ha-listen", f"tcp://127.0.0.1:{listen}", "--ha-peer",
                          f"tcp://127.0.0.1:{peer}", "--failover-timeout", FAILOVER_TIMEOUT]
        return self.processes.start(name, arguments)

    def workers(self, endpoints, slots, count=2):
        return [self.processes.start(f"worker{n}", [self.bin, "worker", "--slots", str(slots), "--worker-id", f"w{n}",
                                                    "--coordinator", endpoints]) for n in range(count)]

    def status(self, endpoint):
        completed = subprocess.run([self.bin, "status", "--json", "--coordinator", endpoint], capture_output=True,
                                   text=True, timeout=60)
        if completed.returncode != 0:
            return None
        try:
            return json.loads(completed.stdout)
        except json.JSONDecodeError:
            return None

    def role(self, endpoint):
        """What the coordinator at `endpoint` is: the `pair` object's state when status has one; else "active" when it
        answered, "passive" when it refused as the passive one of its pair; None otherwise."""
        completed = subprocess.run([self.bin, "status", "--json", "--coordinator", endpoint], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=60)
        if completed.returncode == 0:
            try:
                pair = json.loads(completed.stdout[completed.stdout.index("{"):]).get("pair") or {}
            except ValueError:
                return None
            return pair.get("state") or "active"
        passive = "passive one of a pair" in completed.stdout or "of a pair is not active" in completed.stdout
        return "passive" if passive else None

    @staticmethod
    def caught_up_count(process):
        """How often the coordinator's log says its passive peer holds its whole journal."""
        return pathlib.Path(process.log_path).read_text(errors="replace").count("holds the whole journal")

    def wait(self, what, probe, timeout=HANG):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = probe()
            if value:
                return value
            time.sleep(0.05)
        raise RuntimeError(f"{what}: not reached in {timeout} s; logs in {self.scratch}")

    def start_pair(self, tag):
        ports = [free_port(), free_port()]
        pair_ports = [free_port(), free_port()]
        data = [self.scratch / f"{tag}-a", self.scratch / f"{tag}-b"]
        roles = ["primary", "backup"]
        endpoints = [f"tcp://127.0.0.1:{p}" for p in ports]

        def launch(index):
            return self.coordinator(f"{tag}-{roles[index]}", ports[index], data[index],
                                    (roles[index], pair_ports[index], pair_ports[1 - index]))

        coordinators = [launch(0), launch(1)]
        self.wait("the pair settles (one active, one passive)",
                  lambda: sorted(self.role(e) or "" for e in endpoints) == ["active", "passive"])
        # In step: until the passive one holds the whole journal, the active one acknowledges alone, and a kill
        # then leaves the passive one refusing (behind what the peers witnessed) until the killed one is back.
        self.wait("the passive coordinator holds the whole journal",
                  lambda: any(self.caught_up_count(c) > 0 for c in coordinators))
        return endpoints, coordinators, launch

    def batch_succeeded(self, endpoint, batch_id):
        """The batch's succeeded items as the coordinator at `endpoint` says (None: refused, or no answer)."""
        completed = subprocess.run([self.bin, "status", batch_id, "--json", "--coordinator", endpoint],
                                   capture_output=True, text=True, timeout=60)
        if completed.returncode != 0:
            return None
        try:
            batches = json.loads(completed.stdout).get("batches", [])
        except json.JSONDecodeError:
            return None
        return next((b.get("succeeded") for b in batches if b.get("id") == batch_id), None)

    def active_index(self, endpoints):
        for index, endpoint in enumerate(endpoints):
            if self.role(endpoint) == "active":
                return index
        return None

    # -------------------------------------------------------------- (a) failover time

    def failover(self, kills):
        print(f"\n(a) failover under load: {kills} kills, --failover-timeout {FAILOVER_TIMEOUT}, "
              f"{ITEMS} items a round, kill after {LOADED}; load {load()}", flush=True)
        photos = self.scratch / "photos"
        photos.mkdir()
        shutil.copy(REPOSITORY / "samples/coffee.jpg", photos / "small.jpg")
        origin = Origin(photos)
        endpoints, coordinators, launch = self.start_pair("failover")
        both = ",".join(endpoints)
        self.workers(both, slots=4)
        self.wait("two workers registered", lambda: len((self.status(endpoints[self.active_index(endpoints) or 0]) or {})
                                                        .get("workers", [])) == 2)
        times, takeovers = [], []
        for round_ in range(kills):
            urls = [f"{origin.base}/small.jpg?round={round_}&i={i}" for i in range(ITEMS)]
            out = self.scratch / f"out-{round_}"
            submit = subprocess.Popen([self.bin, "submit", *urls, "--out", str(out), "--coordinator", both],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
            # submit's lines, read as they come in a thread of their own (the main thread kills and polls).
            lines = []
            reader = threading.Thread(target=lambda: lines.extend(submit.stdout), daemon=True)
            reader.start()
            active = self.active_index(endpoints)
            other = endpoints[1 - active]
            items = lambda: sum(1 for line in list(lines) if "] ok " in line or "] failed" in line)
            self.wait(f"round {round_}: {LOADED} items done", lambda: items() >= LOADED or submit.poll() is not None)
            batch_id = next((line.split()[1].rstrip(":") for line in list(lines) if line.startswith("batch ")), None)
            if batch_id is None or submit.poll() is not None:
                raise RuntimeError(f"round {round_}: the batch ended before the kill; logs in {self.scratch}")
            coordinators[active].kill()
            killed_at = time.monotonic()
            coordinators[active].wait()
            # Through the other: its `status BATCH` answers once it took over (the passive one refuses), and the
            # batch's succeeded count it gives then grows with the first result that reaches it. (submit's own
            # lines cannot tell: it may print results the killed one sent before it died, late.)
            takeover_at = first_after = base = None
            while first_after is None and submit.poll() is None and time.monotonic() - killed_at < HANG:
                succeeded = self.batch_succeeded(other, batch_id)
                if succeeded is not None:
                    if base is None:
                        base, takeover_at = succeeded, time.monotonic()
                    elif succeeded > base:
                        first_after = time.monotonic()
                time.sleep(0.02)
            submit.wait(timeout=HANG)
            reader.join(timeout=60)
            done = items()
            if submit.returncode != 0:
                # A `submit` that gave up ("lost contact") names `results BATCH`, which re-attaches through either.
                results = subprocess.run([self.bin, "results", batch_id, "--out", str(out), "--overwrite",
                                          "--coordinator", both], capture_output=True, text=True, timeout=HANG)
                done = sum(1 for line in results.stdout.splitlines() if "] ok " in line or "] failed" in line)
                submit = results
            outputs = len(list(out.iterdir())) if out.exists() else 0
            if submit.returncode != 0 or done != ITEMS or outputs != ITEMS or first_after is None:
                raise RuntimeError(f"round {round_}: submit exited {submit.returncode}, {done} items reported, "
                                   f"{outputs} outputs (of {ITEMS}), first result through the other "
                                   f"{'seen' if first_after else 'not seen'}; logs in {self.scratch}")
            times.append(first_after - killed_at)
            takeovers.append(takeover_at - killed_at)
            print(f"  kill {round_ + 1:2}: coordinator {'ab'[active]} killed; the other serves after "
                  f"{(takeover_at - killed_at) * 1000:6.0f} ms, first result through it after "
                  f"{(first_after - killed_at) * 1000:6.0f} ms; every item once; load {load()}", flush=True)
            # The killed one back, passive; the round ends once the other (active since the kill) says it holds its
            # whole journal.
            survivor = coordinators[1 - active]
            before = self.caught_up_count(survivor)
            coordinators[active] = launch(active)
            self.wait("the restarted coordinator caught up", lambda: self.caught_up_count(survivor) > before)
            self.wait("the restarted coordinator passive", lambda: self.role(endpoints[active]) == "passive")
            shutil.rmtree(out, ignore_errors=True)
        origin.close()
        self.processes.stop_all()
        serving = [t * 1000 for t in takeovers]
        print(f"  kill -9 -> the other answers status (took over): p50 {percentile(serving, 50):.0f} ms, "
              f"p99 {percentile(serving, 99):.0f} ms", flush=True)
        ms = [t * 1000 for t in times]
        print(f"  failover, kill -9 -> first result through the other: p50 {percentile(ms, 50):.0f} ms, "
              f"p99 {percentile(ms, 99):.0f} ms, min {min(ms):.0f}, max {max(ms):.0f} ({len(ms)} kills; goal < 5000 ms); "
              f"load {load()}", flush=True)
        return ms

    # -------------------------------------------------------------- (b) cost of replication

    def noop_throughput(self, paired):
        tag = f"noop-{'pair' if paired else 'single'}-{time.monotonic_ns()}"
        if paired:
            endpoints, _, _ = self.start_pair(tag)
            target = endpoints[self.active_index(endpoints)]
            workers_endpoint = ",".join(endpoints)
        else:
            port = free_port()
            self.coordinator(tag, port, self.scratch / tag)
            target = workers_endpoint = f"tcp://127.0.0.1:{port}"
        self.workers(workers_endpoint, slots=64)
        completed = subprocess.run([self.cluster_benchmark, "--coordinator", target, "--tasks", str(NOOP_TASKS),
                                    "--batch-size", str(min(NOOP_TASKS, 25000)), "--latency-rounds", "0",
                                    "--expect-workers", "2"], capture_output=True, text=True, timeout=HANG)
        self.processes.stop_all()
        rate = None
        for line in completed.stdout.splitlines():
            if line.startswith("shiftwork no-op throughput:"):
                rate = float(line.split(":")[1].split()[0])
        if completed.returncode != 0 or rate is None:
            raise RuntimeError(f"ClusterBenchmark exited {completed.returncode}:\n{completed.stdout}\n{completed.stderr}")
        return rate

    def photo_run(self, paired, origin):
        tag = f"photos-{'pair' if paired else 'single'}-{time.monotonic_ns()}"
        if paired:
            endpoints, _, _ = self.start_pair(tag)
            both = ",".join(endpoints)
        else:
            port = free_port()
            self.coordinator(tag, port, self.scratch / tag)
            both = f"tcp://127.0.0.1:{port}"
        self.workers(both, slots=2)
        self.wait("two workers registered", lambda: any(len((self.status(e) or {}).get("workers", [])) == 2
                                                        for e in both.split(",")))
        urls = [f"{origin.base}/{name}?copy={copy}" for copy in range(PHOTO_COPIES)
                for name in ["coffee.jpg", "rocket.jpg", "chelsea.png", "cameraman.png"]]
        out = self.scratch / f"out-{tag}"
        started = time.monotonic()
        completed = subprocess.run([self.bin, "submit", *urls, "--out", str(out), "--coordinator", both],
                                   capture_output=True, text=True, timeout=HANG)
        elapsed = time.monotonic() - started
        self.processes.stop_all()
        if completed.returncode != 0:
            raise RuntimeError(f"submit exited {completed.returncode}:\n{completed.stdout}")
        shutil.rmtree(out, ignore_errors=True)
        return len(urls) / elapsed

    def cost(self, repeat, skip_noop):
        print(f"\n(b) cost of replication: single coordinator vs pair, alternated, {repeat} times; load {load()}",
              flush=True)
        origin = Origin(REPOSITORY / "samples")
        results = {"noop": {False: [], True: []}, "photos": {False: [], True: []}}
        for run in range(repeat):
            for paired in (False, True):
                if not skip_noop:
                    rate = self.noop_throughput(paired)
                    results["noop"][paired].append(rate)
                    print(f"  run {run + 1}, {'pair  ' if paired else 'single'}: no-op {rate:,.0f} tasks/s; load {load()}",
                          flush=True)
                rate = self.photo_run(paired, origin)
                results["photos"][paired].append(rate)
                print(f"  run {run + 1}, {'pair  ' if paired else 'single'}: photos {rate:.2f}/s; load {load()}",
                      flush=True)
        origin.close()
        for what, unit in [("noop", "tasks/s"), ("photos", "photos/s")]:
            single, pair = results[what][False], results[what][True]
            if not single:
                continue
            ratio = statistics.median(pair) / statistics.median(single)
            print(f"  {what}: single min {min(single):,.2f} median {statistics.median(single):,.2f} {unit}; "
                  f"pair min {min(pair):,.2f} median {statistics.median(pair):,.2f}; pair / single (medians) "
                  f"{ratio:.3f} (goal >= 0.9)", flush=True)
        print(f"  load {load()}", flush=True)
        return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=str(REPOSITORY / ".build/release"), help="the directory of shiftwork and ClusterBenchmark")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-failover", action="store_true")
    parser.add_argument("--skip-cost", action="store_true")
    parser.add_argument("--skip-noop", action="store_true", help="(b) without ClusterBenchmark's no-op run")
    options = parser.parse_args()
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="shiftwork-bench-failover-"))
    bench = Bench(options.bin, scratch)
    print(f"bench-failover: {options.bin}; {os.cpu_count()} CPUs; load {load()}; scratch {scratch}", flush=True)
    try:
        if not options.skip_failover:
            bench.failover(options.kills)
        if not options.skip_cost:
            bench.cost(options.repeat, options.skip_noop)
    finally:
        bench.processes.stop_all()
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
