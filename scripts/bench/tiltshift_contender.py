"""One contender of scripts/bench-tiltshift, in a process of its own (so that its peak memory is its own).

    python tiltshift_contender.py CONTENDER TASK INPUT OUTPUT REPEAT

CONTENDER: pillow (Pillow or Pillow-SIMD, whichever this interpreter imports; "version" is its number), vips (pyvips, libvips),
opencv. TASK:
  filter  decode INPUT once, time the filter alone on the decoded pixels (best of REPEAT), save the result
          losslessly to OUTPUT (PNG) for the PSNR;
  jpeg    INPUT's bytes in memory -> decode + filter + encode JPEG quality 90 in memory (best of REPEAT);
          the last result is written to OUTPUT;
  png     file INPUT -> file OUTPUT, PNG (zlib level 3, Up filter, as shiftwork), once.
Prints one JSON line: {"seconds": best wall time, "cpu_seconds": best CPU time of the process (every thread),
"width": w, "height": h, "version": "..."}. CPU time is far less disturbed by other work on the machine.

The recipe is Core Image's, as in Imaging's TiltShiftMask: Gaussian sigma 10 with repeated edges, blended
over the original through m(y) = clamp(4 |y/h - 0.5|, 0, 1).
"""
import io
import json
import sys
import time

import numpy as np

SIGMA = 10.0
PNG_FILTER_UP = 0x20


def mask_rows(height):
    y = np.arange(height) / height
    return np.clip(4 * np.abs(y - 0.5), 0, 1)


def best(repeat, fn):
    """(best wall time, best CPU time, the last result) of `repeat` runs of `fn`."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return (min(walls), min(cpus)), result


def pillow(task, src, dst, repeat):
    from PIL import Image, ImageFilter
    version = Image.__version__

    def tilt(im):
        blurred = im.filter(ImageFilter.GaussianBlur(SIGMA))
        column = Image.frombytes("L", (1, im.height), (mask_rows(im.height) * 255 + 0.5).astype(np.uint8).tobytes())
        return Image.composite(blurred, im, column.resize(im.size, Image.NEAREST))

    if task == "filter":
        im = Image.open(src).convert("RGB")
        seconds, out = best(repeat, lambda: tilt(im))
        out.save(dst, compress_level=1)
    elif task == "jpeg":
        data = open(src, "rb").read()

        def run():
            im = Image.open(io.BytesIO(data))
            im.load()
            buffer = io.BytesIO()
            tilt(im).save(buffer, "JPEG", quality=90)
            return buffer.getvalue()
        seconds, out = best(repeat, run)
        open(dst, "wb").write(out)
        im = Image.open(src)
    else:
        def run():
            im = Image.open(src)
            im.load()
            tilt(im).save(dst, compress_level=3)
            return im
        seconds, im = best(1, run)
    return seconds, im.size, version


def vips(task, src, dst, repeat):
    import pyvips
    version = "libvips %d.%d.%d" % (pyvips.version(0), pyvips.version(1), pyvips.version(2))

    def tilt(im):
        # The blend as libvips' own weighted choice (ifthenelse with blend=True, the mask as 0-255): twice
        # as fast here as the same blend written as float arithmetic, im + (blurred - im) * mask, and equal
        # to it within rounding (74 dB). libvips' strongest form of the recipe, not a convenient one.
        weights = np.rint(mask_rows(im.height) * 255).astype(np.uint8)
        mask = pyvips.Image.new_from_memory(weights.tobytes(), 1, im.height, 1, "uchar").zoom(im.width, 1)
        blurred = im.gaussblur(SIGMA, min_ampl=0.01)
        return mask.ifthenelse(blurred, im, blend=True)

    if task == "filter":
        from PIL import Image
        pixels = np.asarray(Image.open(src).convert("RGB"))
        h, w, _ = pixels.shape
        im = pyvips.Image.new_from_memory(pixels.tobytes(), w, h, 3, "uchar")
        seconds, out = best(repeat, lambda: tilt(im).write_to_memory())
        Image.fromarray(np.frombuffer(out, np.uint8).reshape(h, w, 3)).save(dst, compress_level=1)
        size = (w, h)
    elif task == "jpeg":
        data = open(src, "rb").read()

        def run():
            im = pyvips.Image.new_from_buffer(data, "", access="sequential")
            return tilt(im).write_to_buffer(".jpg", Q=90, subsample_mode="on")
        seconds, out = best(repeat, run)
        open(dst, "wb").write(out)
        size = (pyvips.Image.new_from_buffer(data, "").width, pyvips.Image.new_from_buffer(data, "").height)
    else:
        def run():
            im = pyvips.Image.new_from_file(src, access="sequential")
            tilt(im).write_to_file(dst, compression=3, filter=PNG_FILTER_UP)
            return (im.width, im.height)
        seconds, size = best(1, run)
    return seconds, size, version


def opencv(task, src, dst, repeat):
    import cv2
    cv2.setNumThreads(1)
    version = "OpenCV " + cv2.__version__

    def tilt(img):
        h, w = img.shape[:2]
        weights = np.repeat(mask_rows(h).astype(np.float32)[:, None], w, axis=1)
        blurred = cv2.GaussianBlur(img, (0, 0), SIGMA, borderType=cv2.BORDER_REPLICATE)
        return cv2.blendLinear(blurred, img, weights, 1 - weights)

    if task == "filter":
        img = cv2.imread(src, cv2.IMREAD_COLOR)
        seconds, out = best(repeat, lambda: tilt(img))
        cv2.imwrite(dst, out, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    elif task == "jpeg":
        data = np.frombuffer(open(src, "rb").read(), np.uint8)

        def run():
            return cv2.imencode(".jpg", tilt(cv2.imdecode(data, cv2.IMREAD_COLOR)), [cv2.IMWRITE_JPEG_QUALITY, 90])[1]
        seconds, out = best(repeat, run)
        open(dst, "wb").write(out.tobytes())
        img = cv2.imdecode(data, cv2.IMREAD_COLOR)
    else:
        def run():
            img = cv2.imread(src, cv2.IMREAD_COLOR)
            cv2.imwrite(dst, tilt(img), [cv2.IMWRITE_PNG_COMPRESSION, 3])
            return img
        seconds, img = best(1, run)
    return seconds, (img.shape[1], img.shape[0]), version


def main():
    contender, task, src, dst, repeat = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    run = {"pillow": pillow, "vips": vips, "opencv": opencv}[contender]
    (seconds, cpu_seconds), (w, h), version = run(task, src, dst, repeat)
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds, "width": w, "height": h, "version": version}))


if __name__ == "__main__":
    main()
