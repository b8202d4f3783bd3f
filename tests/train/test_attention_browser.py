#!/usr/bin/python3
"""`tapegpt attention`'s page in a real browser: headless Chromium loads
index.html (scripts/render_page.py), and the test checks that the page ran
to the end with no console message at all, that the DOM holds the whole
model view (one canvas per layer × head), the selected head's cells (the
visible lower triangle and the masked upper one) and the head view's lines,
that the head named in the URL (#layer=2&head=1&query=9&key=4) is selected
and the hover handler, fired on that cell, shows its weight from
attention.json, and that the screenshot PNG really shows the heatmap
colours and the masked grey.
Run by CTest as: test_attention_browser.py PATH/TO/tapegpt
Without chromium it skips (exit 77), except under TAPEGPT_NO_SKIP=1, where it
fails.
"""
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import render_page  # noqa: E402

PROMPT = 'ROMEO: "<b>&amp;</script>"\nJULIET: caf\u00e9 \u2603'


def read_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA PNG, stdlib only."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride, rows, prev = width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, [[tuple(r[x * bpp:x * bpp + 3]) for x in range(width)] for r in rows]


def main():
    tapegpt = os.path.abspath(sys.argv[1])
    if not render_page.find_chromium():
        if os.environ.get("TAPEGPT_NO_SKIP") == "1":
            print("FAIL: chromium not found (TAPEGPT_NO_SKIP=1); install Debian's chromium")
            return 1
        print("skipped: chromium not found; install Debian's chromium")
        return 77
    tmp = tempfile.mkdtemp(prefix="tapegpt-browser-")
    keep = False  # a failing run leaves its page and screenshot to look at
    try:
        def tg(*args):
            subprocess.run([tapegpt, *args], check=True, capture_output=True, timeout=300)
        corpus = os.path.join(tmp, "c.txt")
        with open(os.path.join(REPO, "data", "tinyshakespeare.txt"), encoding="utf-8") as f:
            text = f.read()[:20000]
        with open(corpus, "w", encoding="utf-8") as f:
            f.write(text + PROMPT * 5)
        tg("prepare", "--input", corpus, "--tokenizer", "char", "--out", os.path.join(tmp, "d"))
        # An initialised model (no training needed to draw its attention),
        # 3 layers × 2 heads so rows and columns of the grid differ.
        tg("train", "--data", os.path.join(tmp, "d"), "--out", os.path.join(tmp, "r"),
           "--n-layer", "3", "--n-head", "2", "--n-embd", "32", "--block-size", "64",
           "--max-steps", "0", "--threads", "2")
        out = os.path.join(tmp, "att")
        tg("attention", "--ckpt", os.path.join(tmp, "r", "ckpt.h5"), "--prompt", PROMPT,
           "--out", out, "--threads", "2")
        png = os.path.join(tmp, "page.png")
        # Open layer 2, head 1 with the weight of query 9 -> key 4 shown, the
        # way hovering over that cell shows it (the same event handler).
        dom, console = render_page.render(os.path.join(out, "index.html"), png=png,
                                          width=1300, height=1600,
                                          fragment="layer=2&head=1&query=9&key=4")
        with open(os.path.join(out, "attention.json"), encoding="utf-8") as f:
            want = json.load(f)["layers"][2][1][9][4]
        T, L, H = len(PROMPT), 3, 2
        failures = []

        def check(ok, what):
            print(("ok   " if ok else "FAIL ") + what)
            if not ok:
                failures.append(what)

        check(console == [], f"no console messages (got {console[:3]})")
        check('data-status="ready"' in dom, "the script ran to the end (body data-status=ready)")
        check(re.search(r'<div id="errors" hidden=""></div>', dom) is not None, "#errors is empty")
        thumbs = len(re.findall(r'<canvas class="thumb[" ]', dom))
        check(thumbs == L * H, f"model view: {thumbs} head canvases, want {L * H}")
        cells = len(re.findall(r'<rect [^>]*class="cell"', dom))
        check(cells == T * (T + 1) // 2, f"large view: {cells} cells, want {T * (T + 1) // 2}")
        masked = len(re.findall(r'<rect [^>]*class="masked"', dom))
        check(masked == T * (T - 1) // 2, f"large view: {masked} masked cells, want {T * (T - 1) // 2}")
        links = len(re.findall(r'<line [^>]*class="link"', dom))
        check(links == T * (T + 1) // 2, f"head view: {links} lines, want {T * (T + 1) // 2}")
        check(dom.count('class="thumb selected"') == 1
              and re.search(r'class="thumb selected"[^>]*data-layer="2" data-head="1"', dom) is not None,
              "one head selected, the one the URL named")
        readout = re.search(r'<div id="readout">([^<]*)</div>', dom)
        text = html.unescape(readout.group(1)) if readout else ""
        got = re.search(r"weight ([0-9.e+-]+)", text)
        check(got is not None and "layer 2 head 1" in text and "query 9" in text and "key 4" in text
              and abs(float(got.group(1)) - want) <= 1e-6 * max(1.0, want),
              f"hover readout shows the weight {want} (got {text!r})")
        # The labels came through as text: the DOM serialiser escapes < and &.
        check("&lt;" in dom and "&amp;" in dom and "\u2603" in dom, "special-character labels present")

        w, h, px = read_png(png)
        check((w, h) == (1300, 1600), f"screenshot size {w}x{h}")
        colours = {}
        for row in px:
            for p in row:
                colours[p] = colours.get(p, 0) + 1
        grey = sum(n for (r, g, b), n in colours.items() if abs(r - 0xd9) < 4 and abs(g - 0xd9) < 4 and abs(b - 0xd9) < 4)
        blue = sum(n for (r, g, b), n in colours.items() if b > r + 60 and b > 90)
        check(grey > 2000, f"masked grey visible ({grey} px)")
        check(blue > 2000, f"heatmap blues visible ({blue} px)")
        if failures:
            print(f"{len(failures)} check(s) failed; page and screenshot left in {tmp}")
            keep = True
            return 1
        return 0
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
