"""The measuring side of scripts/bench-tiltshift (which builds, installs and prepares the data first).

    python tiltshift_bench.py --shiftwork BIN --photo PHOTO.jpg --decoded PHOTO.png [--large LARGE.png]
                              [--simd-python PY] [--repeat N] [--pin "taskset -c 0"] [--runs R]

Every contender runs in a process of its own, pinned to one core; its peak memory is the process's
maximum resident set (getrusage of the child). Each figure is the best of REPEAT runs inside the process;
with --runs R the whole measurement is repeated R times and each cell shows min-max over the runs.

PSNR is against the exact recipe: a float64 Gaussian (sigma 10, sampled to 5 sigma, edges repeated) of the
decoded photo, blended through the same mask, not rounded. The filter column compares the lossless output
of the filter; the JPEG column compares the decoded JPEG output (so it includes the quality-90 encoding's
own loss, the same for every contender).
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import cv2
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
CONTENDER = os.path.join(HERE, "tiltshift_contender.py")
SIGMA = 10.0


def mask_rows(height):
    y = np.arange(height) / height
    return np.clip(4 * np.abs(y - 0.5), 0, 1)


def exact_reference(png, cache):
    if os.path.exists(cache):
        return np.load(cache)
    image = np.asarray(Image.open(png).convert("RGB")).astype(np.float64)
    radius = int(np.ceil(5 * SIGMA))
    x = np.arange(-radius, radius + 1)
    kernel = np.exp(-x * x / (2 * SIGMA * SIGMA))
    kernel /= kernel.sum()
    blurred = cv2.sepFilter2D(image, cv2.CV_64F, kernel, kernel, borderType=cv2.BORDER_REPLICATE)
    m = mask_rows(image.shape[0])[:, None, None]
    exact = (image + m * (blurred - image)).astype(np.float32)
    np.save(cache, exact)
    return exact


def psnr(path, exact):
    got = np.asarray(Image.open(path).convert("RGB")).astype(np.float32)
    if got.shape != exact.shape:
        return float("nan")
    mse = float(np.mean((got - exact) ** 2))
    return 99.0 if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def run_measured(command):
    """Runs `command`; returns its stdout, its stderr and its peak RSS in MB.

    The peak comes from GNU time, which forks the command itself: a child forked from this (large) Python
    process would report this process's peak as its own (Linux carries the high-water mark across fork+exec).
    """
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r", suffix=".peak") as peak:
        process = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak.name] + command, stdout=out, stderr=err, text=True)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        kilobytes = int(peak.read().strip().splitlines()[-1])
    if process.returncode != 0:
        sys.exit(f"failed ({process.returncode}): {' '.join(map(shlex.quote, command))}\n{stderr}")
    return stdout, stderr, kilobytes / 1024


TIMING = re.compile(r"(\d+)x(\d+) ([\d.]+) MP: decode ([\d.]+) ms, filter ([\d.]+) ms .* encode ([\d.]+) ms, total ([\d.]+) ms"
                    r".*cpu: decode ([\d.]+) ms, filter ([\d.]+) ms .* encode ([\d.]+) ms, total ([\d.]+) ms")


def shiftwork(args, task, src, dst, extra=()):
    command = shlex.split(args.pin) + [args.shiftwork, "tiltshift", src, dst, "--timing", "--threads", "1",
                                       "--max-megapixels", "200", "--max-bytes", "2048"]
    if task != "png":
        command += ["--repeat", str(args.repeat)]
    out, err, rss = run_measured(command + list(extra))
    match = TIMING.search(err)
    if not match:
        sys.exit("cannot parse shiftwork's timing line: " + err)
    w, h, mp, dec, fil, enc, tot, cdec, cfil, cenc, ctot = match.groups()
    seconds = float(fil if task == "filter" else tot) / 1000
    cpu_seconds = float(cfil if task == "filter" else ctot) / 1000
    return (seconds, cpu_seconds), float(mp), rss


def python_contender(args, python, name, task, src, dst):
    command = shlex.split(args.pin) + [python, CONTENDER, name, task, src, dst, str(args.repeat if task != "png" else 1)]
    out, err, rss = run_measured(command)
    result = json.loads(out.strip().splitlines()[-1])
    return (result["seconds"], result["cpu_seconds"]), result["width"] * result["height"] / 1e6, rss, result["version"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shiftwork", required=True)
    parser.add_argument("--photo", required=True)
    parser.add_argument("--decoded", required=True)
    parser.add_argument("--large")
    parser.add_argument("--simd-python")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--pin", default="")
    args = parser.parse_args()

    exact = exact_reference(args.decoded, os.path.splitext(args.decoded)[0] + "-exact.npy")
    help_text = subprocess.run([args.shiftwork, "tiltshift", "--help"], capture_output=True, text=True).stdout
    planar = "--always-rgb" in help_text
    # --exact-blur: the blur at full resolution (the default halves the plane from sigma 4; both are measured).
    exact_blur = "--exact-blur" in help_text

    contenders = [("shiftwork", None)]
    contenders += [("vips", sys.executable), ("pillow", sys.executable)]
    if args.simd_python:
        contenders.append(("pillow-simd", args.simd_python))
    contenders.append(("opencv", sys.executable))

    # rows[name] = {"filter": [(mps, rss, psnr)], "jpeg": [...], "png": [...]}
    rows, labels = {}, {}
    tmp = tempfile.mkdtemp(prefix="bench-tiltshift-")
    for run_index in range(args.runs):
        for name, python in contenders:
            variants = [(name, ())]
            if name == "shiftwork":
                variants = [("shiftwork (planar JPEG)" if planar else "shiftwork", ())]
                if planar:
                    variants.append(("shiftwork (RGB path)", ("--always-rgb",)))
                if exact_blur:
                    variants.append(("shiftwork (planar, exact blur)" if planar else "shiftwork (exact blur)", ("--exact-blur",)))
            for label, extra in variants:
                cells = rows.setdefault(label, {})
                for task in ["filter", "jpeg"] + (["png"] if args.large else []):
                    if task == "filter" and "--always-rgb" in extra:
                        continue  # the RGB path's filter is the main line's: the RGB filter on decoded pixels
                    src = {"filter": args.decoded, "jpeg": args.photo, "png": args.large}[task]
                    dst = os.path.join(tmp, f"{name}-{task}" + (".jpg" if task == "jpeg" else ".png"))
                    if name == "shiftwork":
                        seconds, mp, rss = shiftwork(args, task, src, dst, extra)
                        labels[label] = label
                    else:
                        contender = "pillow" if name == "pillow-simd" else name
                        seconds, mp, rss, version = python_contender(args, python, contender, task, src, dst)
                        labels[label] = ("Pillow-SIMD " if name == "pillow-simd" else "Pillow " if name == "pillow" else "") + version
                    quality = psnr(dst, exact) if task in ("filter", "jpeg") else float("nan")
                    wall, cpu = seconds
                    cells.setdefault(task, []).append((mp / wall, rss, quality, mp / cpu))
                    if task == "png":
                        os.remove(dst)  # hundreds of MB each
                    print(f"  run {run_index + 1}: {labels[label]:32} {task:6} {mp / wall:8.1f} MP/s ({mp / cpu:6.1f} by CPU time)  "
                          f"peak {rss:7.1f} MB  PSNR {quality:5.1f} dB", file=sys.stderr, flush=True)

    def span(values, fmt):
        """min-max over the runs (one value when they agree or with one run)."""
        low, high = min(values), max(values)
        return fmt.format(low) if args.runs == 1 or fmt.format(low) == fmt.format(high) else (fmt + "-" + fmt).format(low, high)

    vips_cells = rows.get("vips", {})
    print(f"12 MP photo: {args.photo}; large: {args.large or '-'}; best of {args.repeat} in each process, "
          f"{args.runs} run(s), one core ({args.pin or 'not pinned'})")
    for metric, title in [(0, "MP/s by wall-clock time"), (3, "MP/s by CPU time of the process (less disturbed by other load)")]:
        print(f"\n{title}:")
        header = f"{'contender':34} {'filter MP/s':>12} {'PSNR':>6} {'JPEG->JPEG MP/s':>16} {'peak MB':>8} {'PSNR':>6}"
        if args.large:
            header += f" {'144MP PNG->PNG MP/s':>20} {'peak MB':>8}"
        header += f" {'filter/vips':>12} {'JPEG/vips':>10}" + (f" {'PNG/vips':>9}" if args.large else "")
        print(header)
        for label, cells in rows.items():
            line = f"{labels[label]:34}"
            f = cells.get("filter")
            line += f" {span([c[metric] for c in f], '{:.1f}'):>12} {span([c[2] for c in f], '{:.1f}'):>6}" if f else f" {'(same)':>12} {'':>6}"
            j = cells["jpeg"]
            line += f" {span([c[metric] for c in j], '{:.1f}'):>16} {span([c[1] for c in j], '{:.0f}'):>8} {span([c[2] for c in j], '{:.1f}'):>6}"
            if args.large:
                p = cells["png"]
                line += f" {span([c[metric] for c in p], '{:.1f}'):>20} {span([c[1] for c in p], '{:.0f}'):>8}"

            def ratio(task):
                if task not in cells or task not in vips_cells:
                    return ""
                # Same-run ratios: run i of this contender against run i of libvips.
                per_run = [a[metric] / b[metric] for a, b in zip(cells[task], vips_cells[task])]
                return span(per_run, "{:.2f}") + "x"
            line += f" {ratio('filter'):>12} {ratio('jpeg'):>10}" + (f" {ratio('png'):>9}" if args.large else "")
            print(line)
    print("vips = " + labels.get("vips", "libvips") + " (VIPS_CONCURRENCY=1); PSNR against the exact recipe "
          "(filter: lossless output; JPEG: decoded quality-90 output)")


if __name__ == "__main__":
    main()
