#!/usr/bin/env python3
"""The benchmark's "standard" job, written the way a libvips expert would with pyvips.

    python3 Benchmarks/reference.py INPUT_DIR OUTPUT_DIR [--workers 2]

For every *.jpg, *.jpeg, *.png, *.webp, *.tif and *.tiff file directly in INPUT_DIR (the same
globs as the pipeline file that Benchmarks/run.sh writes) it makes three outputs:

    OUTPUT_DIR/{stem}-{ext}-large.jpg        fit inside 1280x1280, never enlarged, JPEG q85, metadata stripped
    OUTPUT_DIR/{stem}-{ext}-small.webp       320x320 centre crop ("cover"), WebP q80
    OUTPUT_DIR/{stem}-{ext}-placeholder.jpg  32 px wide, gaussian blur sigma 2, JPEG q60

How it is done, and why:

- Each file is decoded once, with `Image.thumbnail`: it pushes the 1280 px target
  into the loader (JPEG shrink-on-load, WebP scale-on-load), auto-rotates by the
  EXIF orientation, and converts to sRGB (through the embedded ICC profile, if any).
- The 1280 px image is rendered into memory once (`copy_memory`); it is saved as
  the large output, and the small and placeholder outputs are derived from the
  memory copy, so nothing is decoded twice.
- Two worker processes (multiprocessing, one image at a time each), with
  libvips' own thread pool set to one thread per worker (VIPS_CONCURRENCY=1)
  and the libvips operation cache off: with several images in flight, one
  thread per image is the fastest setting on this machine, and a batch that
  uses each operation once gains nothing from the cache but its memory.

With `--job responsive` it makes the benchmark's responsive set instead, eleventy-img's way:

    OUTPUT_DIR/{stem}-{ext}-{width}.avif   AVIF q50 (effort 4), and
    OUTPUT_DIR/{stem}-{ext}-{width}.webp   WebP q75 (effort 4), at the widths 480, 960, 1440, 1920

never enlarged: widths below the image's are made, and the image's own width stands in once
for the widths at or above it. The one decode is `thumbnail` to the widest width needed (never
up), rendered into memory; the narrower widths are `thumbnail_image` of that copy.

Exit status: 0 when every input produced its outputs, 1 otherwise.
"""

import argparse
import multiprocessing
import os
import sys
import time

PATTERNS = (".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff")  # case-sensitive, like the pipeline's globs

_out_dir = None


def list_inputs(input_dir):
    names = sorted(
        n for n in os.listdir(input_dir)
        if n.endswith(PATTERNS) and os.path.isfile(os.path.join(input_dir, n))
    )
    return [os.path.join(input_dir, n) for n in names]


def init_worker(out_dir, vips_concurrency):
    """Runs once in each worker process, before libvips is loaded there."""
    global _out_dir, pyvips
    _out_dir = out_dir
    # libvips reads VIPS_CONCURRENCY when it starts, so set it before the import.
    os.environ["VIPS_CONCURRENCY"] = str(vips_concurrency)
    import pyvips as _pyvips
    pyvips = _pyvips
    pyvips.cache_set_max(0)
    pyvips.cache_set_max_mem(0)
    pyvips.cache_set_max_files(0)


def process(path):
    """Makes the three outputs for one input. Returns (path, error or None)."""
    base = os.path.basename(path)
    stem, dot_ext = os.path.splitext(base)
    ext = dot_ext[1:]
    prefix = os.path.join(_out_dir, f"{stem}-{ext}")
    try:
        # Decode once, at the smallest size that serves the largest output.
        large = pyvips.Image.thumbnail(path, 1280, height=1280, size="down")
        large = large.copy_memory()
        large.jpegsave(prefix + "-large.jpg", Q=85, strip=True)

        # 320x320 cover: scale so the shorter side is 320, keep the centre.
        small = large.thumbnail_image(320, height=320, crop="centre")
        small.webpsave(prefix + "-small.webp", Q=80)

        # 32 px wide, height by aspect ratio (a huge height bound means "width only").
        tiny = large.thumbnail_image(32, height=10_000_000)
        tiny.gaussblur(2).jpegsave(prefix + "-placeholder.jpg", Q=60)
        return path, None
    except Exception as e:  # pyvips.Error, OSError: one input's failure, not the run's
        return path, str(e).strip()


RESPONSIVE_WIDTHS = (480, 960, 1440, 1920)


def process_responsive(path):
    """Makes the responsive set for one input. Returns (path, error or None)."""
    base = os.path.basename(path)
    stem, dot_ext = os.path.splitext(base)
    prefix = os.path.join(_out_dir, f"{stem}-{dot_ext[1:]}")
    try:
        # Decode once, shrunk on load to the widest width needed; "down" never enlarges, so a
        # narrower photo comes out at its own width, which then stands in for the wider widths.
        widest = pyvips.Image.thumbnail(path, max(RESPONSIVE_WIDTHS), height=10_000_000, size="down")
        widest = widest.copy_memory()
        own = widest.width
        widths = [w for w in RESPONSIVE_WIDTHS if w < own] + [own]
        for width in widths:
            image = widest if width == own else widest.thumbnail_image(width, height=10_000_000)
            image.heifsave(f"{prefix}-{width}.avif", Q=50, effort=4, compression="av1", lossless=False)
            image.webpsave(f"{prefix}-{width}.webp", Q=75, effort=4, lossless=False)
        return path, None
    except Exception as e:  # pyvips.Error, OSError: one input's failure, not the run's
        return path, str(e).strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input_dir")
    ap.add_argument("output_dir")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--vips-concurrency", type=int, default=1,
                    help="libvips threads per worker (default 1)")
    ap.add_argument("--job", choices=("standard", "responsive"), default="standard",
                    help="the standard job (default), or the responsive set")
    args = ap.parse_args()

    inputs = list_inputs(args.input_dir)
    if not inputs:
        print(f"reference: no *.jpg/*.jpeg/*.png/*.webp files in {args.input_dir}", file=sys.stderr)
        return 1
    os.makedirs(args.output_dir, exist_ok=True)
    out_dir = os.path.abspath(args.output_dir)

    start = time.monotonic()
    failures = []
    # The parent never loads libvips, so forking the workers is safe.
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(args.workers, initializer=init_worker,
                  initargs=(out_dir, args.vips_concurrency)) as pool:
        work = process_responsive if args.job == "responsive" else process
        for path, err in pool.imap_unordered(work, inputs, chunksize=1):
            if err:
                failures.append((path, err))
                print(f"reference: FAILED {path}: {err}", file=sys.stderr)
    elapsed = time.monotonic() - start

    ok = len(inputs) - len(failures)
    print(f"reference ({args.job}): {ok}/{len(inputs)} images, "
          f"{len(failures)} failed, {elapsed:.2f} s "
          f"({args.workers} workers x {args.vips_concurrency} libvips thread(s))")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
