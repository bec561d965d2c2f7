"""Pixels for the CI checks, read with the `vips` command (Debian's libvips-tools) so that the
checks need no Python imaging package.

An image is a tuple (width, height, bytes): 8-bit sRGB, three bytes a pixel, row by row.
"""
import os
import subprocess
import tempfile


def vips(*arguments):
    command = ["vips"] + [str(a) for a in arguments]
    done = subprocess.run(command, timeout=120, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit("%s failed: %s" % (" ".join(command), done.stderr.strip()))


def header(path, field):
    return subprocess.run(["vipsheader", "-f", field, path], check=True, timeout=60, capture_output=True,
                          text=True).stdout.strip()


def pixels(path, scale=1.0):
    """The image at `path` (any format libvips reads; its first page), scaled by `scale`, flattened
    onto white, as 8-bit sRGB."""
    with tempfile.TemporaryDirectory(prefix="ci-pixels-") as work:
        image = os.path.join(work, "image.v")
        vips("colourspace", path, image, "srgb")
        if int(header(image, "bands")) in (2, 4):
            flat = os.path.join(work, "flat.v")
            vips("flatten", image, flat, "--background", "255 255 255")
            image = flat
        if int(header(image, "bands")) == 1:
            colour = os.path.join(work, "colour.v")
            vips("bandjoin", "%s %s %s" % (image, image, image), colour)
            image = colour
        if scale != 1.0:
            scaled = os.path.join(work, "scaled.v")
            vips("resize", image, scaled, scale)
            image = scaled
        bytes8 = os.path.join(work, "bytes.v")
        vips("cast", image, bytes8, "uchar")
        raw = os.path.join(work, "image.raw")
        vips("rawsave", bytes8, raw)
        width, height = int(header(bytes8, "width")), int(header(bytes8, "height"))
        with open(raw, "rb") as f:
            return width, height, f.read()


def png_pixels(data, scale=1.0):
    """`pixels` of PNG bytes, such as a screenshot."""
    with tempfile.NamedTemporaryFile(suffix=".png") as f:
        f.write(data)
        f.flush()
        return pixels(f.name, scale)


def difference(a, b, left=0, top=0):
    """The mean absolute difference per byte between image `a` and the window of image `b` at
    (`left`, `top`) as large as `a`, over every second row (enough to tell windows apart)."""
    width, height, data = a
    other_width, _, other = b
    total = count = 0
    for y in range(0, height, 2):
        row = data[y * width * 3:(y + 1) * width * 3]
        start = ((top + y) * other_width + left) * 3
        window = other[start:start + width * 3]
        total += sum(abs(p - q) for p, q in zip(row, window))
        count += len(row)
    return total / max(1, count)


def window_offset(window, source):
    """Where `window` best matches inside `source` along the one axis where it is shorter (a cover
    crop is cut along one axis): (left, top, mean difference there)."""
    width, height, _ = window
    source_width, source_height, _ = source
    best = None
    for left in range(0, source_width - width + 1):
        for top in range(0, source_height - height + 1):
            score = difference(window, source, left, top)
            if best is None or score < best[2]:
                best = (left, top, score)
    return best


def mean_colour(image):
    width, height, data = image
    return tuple(sum(data[channel::3]) / (width * height) for channel in range(3))
