#!/usr/bin/env python3
"""Writes an animated GIF whose frames each differ (a flat colour and a white box that moves),
for Benchmarks/animation.sh and animation-resize.sh.

usage: moving-box-gif.py OUT.gif FRAMES WIDTH HEIGHT [BOX]

Every frame is shown 40 ms; BOX (20 by default) is the side of the white box. Needs pyvips.
"""
import sys
import pyvips

out, count, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
box = int(sys.argv[5]) if len(sys.argv) > 5 else 20
frames = []
for i in range(count):
    frame = pyvips.Image.black(width, height, bands=3) + [(i * 7) % 255, (i * 13) % 255, (i * 29) % 255]
    frame = frame.draw_rect([255, 255, 255], (i * 3) % (width - box), (i * 5) % (height - box), box, box, fill=True)
    frames.append(frame.cast("uchar"))
strip = pyvips.Image.arrayjoin(frames, across=1).copy()
strip.set_type(pyvips.GValue.gint_type, "page-height", height)
strip.set_type(pyvips.GValue.array_int_type, "delay", [40] * count)
strip.set_type(pyvips.GValue.gint_type, "loop", 0)
strip.gifsave(out)
