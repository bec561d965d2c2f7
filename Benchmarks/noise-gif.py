#!/usr/bin/env python3
"""Writes an animated GIF of random pixels, with the standard library alone, for
Benchmarks/animated-gif-cost.sh: every frame different and incompressible, so that decoders and
encoders do real work on each.

usage: noise-gif.py OUT.gif FRAMES WIDTH HEIGHT

Each frame is WIDTH x HEIGHT pixels drawn from a random 256-colour palette, shown 40 to 80 ms
(the delays cycle), looping for ever; seeded, so the same arguments give the same file.
The LZW data is all 9-bit literals with a clear code every 250, valid if not compressed.
"""
import random, struct, sys
def frame_data(pixels):
    # LZW with minimum code size 8, every code a 9-bit literal, a clear code every 250.
    codes = [256]
    for start in range(0, len(pixels), 250):
        if start: codes.append(256)
        codes.extend(pixels[start:start + 250])
    codes.append(257)
    codes += [0] * (-len(codes) % 8)
    out = bytearray()
    for k in range(0, len(codes), 8):
        value = 0
        for j in range(8): value |= codes[k + j] << (9 * j)
        out += value.to_bytes(9, "little")
    data = bytearray([8])
    for k in range(0, len(out), 255):
        chunk = out[k:k + 255]; data.append(len(chunk)); data += chunk
    data.append(0)
    return data
def main(path, frames, width, height, seed=1):
    rng = random.Random(seed)
    gif = bytearray(b"GIF89a") + struct.pack("<HHBBB", width, height, 0xF7, 0, 0)
    gif += bytes(rng.randrange(256) for _ in range(768))
    gif += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    for index in range(frames):
        gif += b"\x21\xf9\x04\x04" + struct.pack("<H", 4 + index % 5) + b"\x00\x00"
        gif += b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0)
        gif += frame_data(list(rng.randbytes(width * height)))
    gif += b"\x3b"
    open(path, "wb").write(gif)
if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
