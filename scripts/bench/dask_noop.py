"""No-op tasks on a local Dask cluster: the baseline for scripts/bench-cluster.

A LocalCluster of 2 worker processes with 1 thread each on 127.0.0.1 (no dashboard) runs
  - throughput: TASKS no-op tasks through client.map, collected with as_completed; the clock runs
    from the first map call until the last result has arrived at the client;
  - latency: LATENCY_ROUNDS single-task round trips, client.submit(...).result(), one at a time.
It prints lines shaped like ClusterBenchmark's:
  dask no-op throughput: N tasks/s
  dask no-op latency p50: X ms p99: Y ms
Usage: python dask_noop.py [--tasks N] [--latency-rounds N] [--warmup N]
"""

import argparse
import logging
import math
import statistics
import time


def noop(i):
    return None


def percentile(sorted_values, p):
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def throughput(client, tasks, batch_size):
    from dask.distributed import as_completed

    start = time.perf_counter()
    done = 0
    # Several maps, like the Swift side's several batches; pure=False gives every call its own key.
    futures = []
    for first in range(0, tasks, batch_size):
        futures += client.map(noop, range(first, min(first + batch_size, tasks)), pure=False)
    for future in as_completed(futures):
        if future.status == "finished":
            done += 1
        future.release()
    elapsed = time.perf_counter() - start
    return elapsed, done


def latency(client, rounds):
    samples = []
    for i in range(rounds):
        start = time.perf_counter()
        client.submit(noop, i, pure=False).result()
        samples.append(time.perf_counter() - start)
    return sorted(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=25_000)
    parser.add_argument("--latency-rounds", type=int, default=2_000)
    parser.add_argument("--warmup", type=int, default=2_000)
    args = parser.parse_args()

    import dask
    import distributed
    from dask.distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as cluster, Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)
        print(f"dask {dask.__version__}, distributed {distributed.__version__}: 2 worker processes x 1 thread")
        if args.tasks > 0:
            if args.warmup > 0:
                throughput(client, args.warmup, args.batch_size)
            elapsed, done = throughput(client, args.tasks, args.batch_size)
            if done != args.tasks:
                raise SystemExit(f"dask: {done} of {args.tasks} no-op tasks finished")
            print(f"dask no-op tasks: {args.tasks}, {elapsed:.3f} s")
            print(f"dask no-op throughput: {round(args.tasks / elapsed)} tasks/s")
        if args.latency_rounds > 0:
            latency(client, min(100, args.latency_rounds))  # warm-up
            samples = latency(client, args.latency_rounds)
            print(
                f"dask no-op latency p50: {percentile(samples, 50) * 1000:.3f} ms "
                f"p99: {percentile(samples, 99) * 1000:.3f} ms "
                f"(mean {statistics.fmean(samples) * 1000:.3f} ms, {len(samples)} single-task round trips)"
            )


if __name__ == "__main__":
    main()
