"""The measuring side of scripts/bench-angle: the focus line at an angle and the progressive falloff beside
today's path (issue #32), on a 12-megapixel photograph, one core.

    python angle_bench.py --shiftwork BIN --photo PHOTO.jpg --decoded PHOTO.png [--repeat N] [--runs R]
                          [--pin "taskset -c 0"]

For each recipe: the filter alone (decoded PNG in, PNG out: `--timing`'s filter figure, the best of REPEAT
runs in the process), JPEG -> JPEG (the planar path; total time), and the filter's PSNR against the exact
recipe at that angle and falloff: a float64 Gaussian per level (sampled to 5 sigma, edges repeated, numpy),
blended through the per-pixel mask, not rounded. The recipes run one after another, RUNS times over
(alternating), so that a change in the machine's load touches all of them alike; cells show min-max.
"""
import argparse
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

SIGMA = 10.0
LEVELS = 4
TIMING = re.compile(r"filter ([\d.]+) ms .* total ([\d.]+) ms.*cpu: decode [\d.]+ ms, filter ([\d.]+) ms .* total ([\d.]+) ms")

RECIPES = [
    ("0° blend (today's path)", 0.0, "blend"),
    ("30° blend", 30.0, "blend"),
    ("90° blend", 90.0, "blend"),
    ("0° progressive", 0.0, "progressive"),
    ("30° progressive", 30.0, "progressive"),
]


def gaussian(image, sigma):
    radius = int(math.ceil(5 * sigma))
    x = np.arange(-radius, radius + 1)
    kernel = np.exp(-x * x / (2 * sigma * sigma))
    kernel /= kernel.sum()
    h, w = image.shape[:2]
    padded = np.pad(image, ((0, 0), (radius, radius), (0, 0)), mode="edge")
    across = np.zeros_like(image)
    for k, weight in enumerate(kernel):
        across += weight * padded[:, k:k + w]
    padded = np.pad(across, ((radius, radius), (0, 0), (0, 0)), mode="edge")
    result = np.zeros_like(image)
    for k, weight in enumerate(kernel):
        result += weight * padded[k:k + h]
    return result


def mask(h, w, angle, focus=0.5, band=0.0, transition=0.25):
    """TiltShiftMask.weight(x:y:...) for every pixel (FocusLine's geometry)."""
    reduced = angle % 360
    exact = {0: (0.0, 1.0), 90: (1.0, 0.0), 180: (0.0, -1.0), 270: (-1.0, 0.0)}
    s, c = exact.get(reduced, (math.sin(math.radians(reduced)), math.cos(math.radians(reduced))))
    extent = abs(s) * w + abs(c) * h
    offset = extent / 2 - (w / 2 * s + h / 2 * c)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    distance = np.abs((x * s + (y * c + offset)) / extent - focus) - band / 2
    return np.clip(distance / transition, 0, 1)


def exact_recipe(image, angle, falloff, blurs):
    levels = LEVELS if falloff == "progressive" else 1
    m = mask(image.shape[0], image.shape[1], angle)[:, :, None]
    result = image.copy()
    previous = image
    for k in range(levels):
        sigma = SIGMA * (k + 1) / levels
        if sigma not in blurs:
            blurs[sigma] = gaussian(image, sigma)
        share = np.clip(m * levels - k, 0, 1)
        result += share * (blurs[sigma] - previous)
        previous = blurs[sigma]
    return result


def psnr(path, exact):
    got = np.asarray(Image.open(path).convert("RGB")).astype(np.float64)
    mse = float(np.mean((got - exact) ** 2))
    return 99.0 if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def shiftwork(args, src, dst, angle, falloff):
    command = shlex.split(args.pin) + [args.shiftwork, "tiltshift", src, dst, "--timing", "--threads", "1",
                                       "--repeat", str(args.repeat), "--angle", str(angle), "--falloff", falloff]
    process = subprocess.run(command, capture_output=True, text=True)
    if process.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{process.stderr}")
    match = TIMING.search(process.stderr)
    if not match:
        sys.exit("cannot parse shiftwork's timing line: " + process.stderr)
    wall_filter, wall_total, cpu_filter, cpu_total = map(float, match.groups())
    return wall_filter, wall_total, cpu_filter, cpu_total


def span(values):
    return f"{min(values):.0f}" if round(min(values)) == round(max(values)) else f"{min(values):.0f}–{max(values):.0f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shiftwork", required=True)
    parser.add_argument("--photo", required=True)
    parser.add_argument("--decoded", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--pin", default="")
    parser.add_argument("--no-psnr", action="store_true")
    args = parser.parse_args()
    filter_cpu = {name: [] for name, _, _ in RECIPES}
    jpeg_cpu = {name: [] for name, _, _ in RECIPES}
    outputs = {}
    with tempfile.TemporaryDirectory() as scratch:
        for run in range(args.runs):
            for index, (name, angle, falloff) in enumerate(RECIPES):
                png = os.path.join(scratch, f"{index}-{run}.png")
                _, _, cpu_filter, _ = shiftwork(args, args.decoded, png, angle, falloff)
                filter_cpu[name].append(cpu_filter)
                outputs[name] = png
                jpeg = os.path.join(scratch, f"{index}-{run}.jpg")
                _, _, _, cpu_total = shiftwork(args, args.photo, jpeg, angle, falloff)
                jpeg_cpu[name].append(cpu_total)
                print(f"run {run + 1}, {name}: filter {cpu_filter:.1f} ms, JPEG -> JPEG {cpu_total:.1f} ms (CPU)", file=sys.stderr)
        accuracy = {}
        if not args.no_psnr:
            image = np.asarray(Image.open(args.decoded).convert("RGB")).astype(np.float64)
            blurs = {}
            for name, angle, falloff in RECIPES:
                accuracy[name] = psnr(outputs[name], exact_recipe(image, angle, falloff, blurs))
                print(f"{name}: PSNR {accuracy[name]:.2f} dB", file=sys.stderr)
    base_filter, base_jpeg = min(filter_cpu[RECIPES[0][0]]), min(jpeg_cpu[RECIPES[0][0]])
    print(f"| recipe (σ {SIGMA:g}) | filter alone, CPU ms | × today's | JPEG → JPEG, CPU ms | × today's | PSNR vs exact recipe |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, _, _ in RECIPES:
        quality = f"{accuracy[name]:.2f} dB" if name in accuracy else "–"
        print(f"| {name} | {span(filter_cpu[name])} | {min(filter_cpu[name]) / base_filter:.2f} | {span(jpeg_cpu[name])} "
              f"| {min(jpeg_cpu[name]) / base_jpeg:.2f} | {quality} |")


if __name__ == "__main__":
    main()
