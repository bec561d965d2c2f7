#!/usr/bin/env python3
"""The many-small-inputs benchmark's helpers: making the inputs, and the pyvips job.

    python3 Benchmarks/many-inputs.py generate DIR COUNT [--width 64] [--height 48]
    python3 Benchmarks/many-inputs.py thumbnail INPUT_DIR OUTPUT_DIR [--workers 2] [--size 32]

generate: writes COUNT small JPEGs, DIR/img-0000001.jpg and on, each with content of its own
(a gradient in colours drawn for it, a rectangle, noise) and a quality drawn between 70 and 95,
so that no two files have the same bytes and the decoder and encoder see varied pixels. Files
already there are kept: a second call with a larger COUNT adds only the missing ones.

thumbnail: the job of Benchmarks/many-inputs.sh written the way a libvips expert would with
pyvips: for every *.jpg in INPUT_DIR, `thumbnail` to fit inside SIZE x SIZE (shrink-on-load),
saved as OUTPUT_DIR/{stem}-thumb.jpg at JPEG q80, metadata stripped. Two worker processes
(multiprocessing, inputs handed out in chunks, as an expert would for many tiny jobs), one
libvips thread each, the operation cache off (as Benchmarks/reference.py).

Exit status: 0 when every input produced its output, 1 otherwise.
"""

import argparse
import multiprocessing
import os
import sys
import time

_out_dir = None
_size = 32


def _generate_range(args):
    directory, start, stop, width, height = args
    import numpy as np
    import pyvips

    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    for index in range(start, stop):
        path = os.path.join(directory, f"img-{index:07d}.jpg")
        if os.path.exists(path):
            continue
        rng = np.random.default_rng(index)
        base = rng.uniform(0, 255, 3)
        dx, dy = rng.uniform(-3, 3, 3), rng.uniform(-3, 3, 3)
        pixels = base + x[..., None] * dx + y[..., None] * dy
        x0, y0 = rng.integers(0, width // 2), rng.integers(0, height // 2)
        pixels[y0:y0 + rng.integers(4, height // 2), x0:x0 + rng.integers(4, width // 2)] = rng.uniform(0, 255, 3)
        pixels += rng.normal(0, rng.uniform(2, 20), pixels.shape)
        data = np.clip(pixels, 0, 255).astype(np.uint8)
        image = pyvips.Image.new_from_memory(data.tobytes(), width, height, 3, "uchar")
        temporary = path + ".part"
        image.jpegsave(temporary, Q=int(rng.integers(70, 96)))
        os.rename(temporary, path)
    return stop - start


def generate(directory, count, width, height):
    os.makedirs(directory, exist_ok=True)
    chunk = 1000
    jobs = [(directory, start, min(start + chunk, count + 1), width, height) for start in range(1, count + 1, chunk)]
    with multiprocessing.Pool(2) as pool:
        for _ in pool.imap_unordered(_generate_range, jobs):
            pass
    print(f"{count} images of {width}x{height} in {directory}")
    return 0


def _init_worker(out_dir, size):
    global _out_dir, _size, pyvips
    _out_dir, _size = out_dir, size
    # libvips reads VIPS_CONCURRENCY when it starts, so set it before the import.
    os.environ["VIPS_CONCURRENCY"] = "1"
    import pyvips as _pyvips
    pyvips = _pyvips
    pyvips.cache_set_max(0)
    pyvips.cache_set_max_mem(0)
    pyvips.cache_set_max_files(0)


def _thumbnail(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        image = pyvips.Image.thumbnail(path, _size, height=_size, size="down")
        image.jpegsave(os.path.join(_out_dir, f"{stem}-thumb.jpg"), Q=80, strip=True)
        return None
    except pyvips.Error as error:
        return f"{path}: {error}"


def thumbnail(input_dir, out_dir, workers, size):
    start = time.monotonic()
    inputs = sorted(os.path.join(input_dir, n) for n in os.listdir(input_dir) if n.endswith(".jpg"))
    os.makedirs(out_dir, exist_ok=True)
    failures = []
    with multiprocessing.Pool(workers, initializer=_init_worker, initargs=(out_dir, size)) as pool:
        for failure in pool.imap_unordered(_thumbnail, inputs, chunksize=64):
            if failure:
                failures.append(failure)
    for failure in failures[:20]:
        print(failure, file=sys.stderr)
    print(f"pyvips thumbnail: {len(inputs) - len(failures)}/{len(inputs)} images in {time.monotonic() - start:.2f} s")
    return 0 if not failures else 1


def main():
    ap = argparse.ArgumentParser(description="Inputs and the pyvips job of the many-small-inputs benchmark.")
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write COUNT small distinct JPEGs into DIR")
    g.add_argument("dir")
    g.add_argument("count", type=int)
    g.add_argument("--width", type=int, default=64)
    g.add_argument("--height", type=int, default=48)
    t = sub.add_parser("thumbnail", help="the pyvips job: a thumbnail of every *.jpg")
    t.add_argument("input_dir")
    t.add_argument("output_dir")
    t.add_argument("--workers", type=int, default=2)
    t.add_argument("--size", type=int, default=32)
    args = ap.parse_args()
    if args.command == "generate":
        return generate(args.dir, args.count, args.width, args.height)
    return thumbnail(args.input_dir, args.output_dir, args.workers, args.size)


if __name__ == "__main__":
    sys.exit(main())
