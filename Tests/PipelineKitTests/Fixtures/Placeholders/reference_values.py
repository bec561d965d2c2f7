#!/usr/bin/env python3
"""Prints the reference BlurHash and ThumbHash values that PlaceholderReferenceTests.swift checks.

The tests do not run this: it is how their constants were made, kept so that anyone can make
them again. Each test image is defined by the same formula here and in
Placeholders/PlaceholderReferenceImages.swift.

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install blurhash==1.1.5 thumbhash-python==1.0.1
    /tmp/ref/bin/python reference_values.py

- BlurHash: `blurhash` 1.1.5 (halcy's pure-Python port of woltapp/blurhash), whose
  `blurhash.encode(rows, x, y)` takes rows of [r, g, b] sRGB values and works in doubles, as the
  TypeScript encoder does. Alpha is dropped before encoding, as the reference encoders ignore it.
- ThumbHash: `thumbhash-python` 1.0.1 (a port of evanw/thumbhash's `rgbaToThumbHash`), whose
  `thumbhash.encode.rgba_to_thumbhash(w, h, rgba)` returns the hash bytes. Python's `round`
  rounds halves to even, JavaScript's `Math.round` rounds them up; the reference is the
  JavaScript, so the port's `round` is replaced with `Math.round` before encoding (the script
  says which values that changes).
"""

import base64
import math

import blurhash
import thumbhash.encode
import thumbhash.hash


def gradient_4x3(x, y):
    return [40 + 60 * x, 30 + 100 * y, 200 - 40 * x - 20 * y, 255]


def gradient_32x24(x, y):
    return [x * 8, y * 10, 255 - (x + y) * 4, 255]


def two_colours_20x10(x, y):
    return [220, 20, 60, 255] if x < 8 else [30, 144, 255, 255]


def portrait_12x30(x, y):
    return [(x * y * 7) % 256, (x * 20) % 256, (y * 8) % 256, 255]


def alpha_24x16(x, y):
    return [x * 10, 200, y * 15, 255 if x < 12 else min(255, y * 17)]


IMAGES = {
    "gradient4x3": (4, 3, gradient_4x3),
    "gradient32x24": (32, 24, gradient_32x24),
    "twoColours20x10": (20, 10, two_colours_20x10),
    "portrait12x30": (12, 30, portrait_12x30),
    "alpha24x16": (24, 16, alpha_24x16),
}

BLURHASH_COMPONENTS = [(4, 3), (1, 1), (9, 9), (5, 2)]


def pixels(width, height, formula):
    return [[formula(x, y) for x in range(width)] for y in range(height)]


def js_round(value):
    """JavaScript's Math.round: halves go up."""
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def thumbhash_bytes(width, height, rows, rounding):
    rgba = [value for row in rows for pixel in row for value in pixel]
    thumbhash.encode.round = rounding
    thumbhash.hash.round = rounding
    return bytes(thumbhash.encode.rgba_to_thumbhash(width, height, rgba))


def main():
    for name, (width, height, formula) in IMAGES.items():
        rows = pixels(width, height, formula)
        rgb = [[pixel[:3] for pixel in row] for row in rows]
        for x, y in BLURHASH_COMPONENTS:
            print(f'blurhash {name} {x}x{y}: "{blurhash.encode(rgb, x, y)}"')
        js = thumbhash_bytes(width, height, rows, js_round)
        python = thumbhash_bytes(width, height, rows, round)
        note = "" if js == python else f"  (Python's round gives {base64.b64encode(python).decode()})"
        print(f'thumbhash {name}: "{base64.b64encode(js).decode()}"{note}')


if __name__ == "__main__":
    main()
