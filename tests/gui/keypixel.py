"""Keystroke to changed pixel, for tests/gui/latency.sh: focuses WINDOW, then COUNT times sends
one key press and release through XTest (what xdotool sends) and polls XGetImage of the region
X,Y,W,H (window-relative) until any pixel of it changes; prints one `key_to_pixel_us=N` line per
key that changed the region within the deadline, and `missed=N` at the end.
Only the standard library: libX11 and libXtst through ctypes.
Usage: keypixel.py WINDOW_ID X Y W H COUNT [KEY]"""
import ctypes
import random
import sys
import time
from ctypes import POINTER, c_char_p, c_int, c_uint, c_ulong, c_void_p

# A key whose echo never shows is given up after this long.
DEADLINE_S = 2.0
# Between two polls: 0.2 ms for the first 3 ms, to time xterm's ~1 ms; then 1 ms, to leave the
# X server and a slower terminal's renderer the CPU (the machine may have two cores).
FAST_POLL_S, FAST_FOR_S, POLL_GAP_S = 0.0002, 0.003, 0.001
# Before the first key: the region unchanged this long, waited for at most STILL_DEADLINE_S.
STILL_S, STILL_DEADLINE_S = 0.5, 10.0
# Between two keys: each is measured on its own, after the last one's frame settled.
SETTLE_S = (0.08, 0.15)


class XImage(ctypes.Structure):
    _fields_ = [
        ("width", c_int), ("height", c_int), ("xoffset", c_int), ("format", c_int), ("data", c_void_p),
        ("byte_order", c_int), ("bitmap_unit", c_int), ("bitmap_bit_order", c_int), ("bitmap_pad", c_int),
        ("depth", c_int), ("bytes_per_line", c_int), ("bits_per_pixel", c_int),
    ]


x11 = ctypes.cdll.LoadLibrary("libX11.so.6")
xtst = ctypes.cdll.LoadLibrary("libXtst.so.6")
x11.XOpenDisplay.restype = c_void_p
x11.XOpenDisplay.argtypes = [c_char_p]
x11.XGetImage.restype = POINTER(XImage)
x11.XGetImage.argtypes = [c_void_p, c_ulong, c_int, c_int, c_uint, c_uint, c_ulong, c_int]
x11.XFree.argtypes = [c_void_p]
x11.XFlush.argtypes = [c_void_p]
x11.XSync.argtypes = [c_void_p, c_int]
x11.XStringToKeysym.restype = c_ulong
x11.XStringToKeysym.argtypes = [c_char_p]
x11.XKeysymToKeycode.restype = ctypes.c_ubyte
x11.XKeysymToKeycode.argtypes = [c_void_p, c_ulong]
x11.XSetInputFocus.argtypes = [c_void_p, c_ulong, c_int, c_ulong]
xtst.XTestFakeKeyEvent.argtypes = [c_void_p, c_uint, c_int, c_ulong]

ALL_PLANES = 0xFFFFFFFF
Z_PIXMAP = 2
REVERT_TO_PARENT = 2


def grab(display, window, x, y, w, h):
    image = x11.XGetImage(display, window, x, y, w, h, ALL_PLANES, Z_PIXMAP)
    if not image:
        sys.exit("XGetImage failed (is the region inside the window?)")
    pixels = ctypes.string_at(image.contents.data, image.contents.bytes_per_line * h)
    x11.XFree(image.contents.data)
    x11.XFree(image)
    return pixels


def main():
    window, x, y, w, h, count = (int(a, 0) for a in sys.argv[1:7])
    key = sys.argv[7] if len(sys.argv) > 7 else "x"
    display = x11.XOpenDisplay(None)
    if not display:
        sys.exit("cannot open the display")
    x11.XSetInputFocus(display, window, REVERT_TO_PARENT, 0)
    x11.XSync(display, 0)
    code = x11.XKeysymToKeycode(display, x11.XStringToKeysym(key.encode()))
    # The region still from one grab to the next for STILL_S (the window's first frames are
    # drawn), or the run starts anyway after STILL_DEADLINE_S.
    last, still_since, started = None, time.monotonic(), time.monotonic()
    while time.monotonic() - still_since < STILL_S and time.monotonic() - started < STILL_DEADLINE_S:
        shot = grab(display, window, x, y, w, h)
        if shot != last:
            last, still_since = shot, time.monotonic()
        time.sleep(0.02)
    missed = 0
    for _ in range(count):
        time.sleep(random.uniform(*SETTLE_S))
        before = grab(display, window, x, y, w, h)
        sent = time.perf_counter()
        xtst.XTestFakeKeyEvent(display, code, 1, 0)
        xtst.XTestFakeKeyEvent(display, code, 0, 0)
        x11.XFlush(display)
        while True:
            now = time.perf_counter()
            if grab(display, window, x, y, w, h) != before:
                print("key_to_pixel_us=%d" % int((now - sent) * 1e6), flush=True)
                break
            if now - sent > DEADLINE_S:
                missed += 1
                break
            time.sleep(FAST_POLL_S if now - sent < FAST_FOR_S else POLL_GAP_S)
    print("missed=%d" % missed)


main()
