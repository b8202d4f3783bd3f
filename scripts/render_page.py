#!/usr/bin/python3
"""Renders an HTML page in headless Chromium (Debian's `chromium`): the DOM
after its scripts ran, the browser's console messages, and a PNG screenshot.

    scripts/render_page.py PAGE.html --png OUT.png [--dom OUT.html] [--width W --height H]
                           [--fragment 'layer=0&head=1']

Prints one line per console message the page produced (none for a healthy
page) and exits 0, or 1 if Chromium failed. Used by the browser test of
`tapegpt attention` (tests/train/test_attention_browser.py) and to make the
README's screenshot. Runs as root too (--no-sandbox); the page is loaded from
a file:// URL with every network feature switched off.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio", "--font-render-hinting=none"]


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(binary, page, extra, timeout, fragment=""):
    """Runs one headless Chromium command on `page`; returns (stdout, console lines)."""
    with tempfile.TemporaryDirectory(prefix="tapegpt-chromium-") as profile:
        cmd = [binary, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
               *extra, "file://" + os.path.abspath(page) + ("#" + fragment if fragment else "")]
        p = subprocess.run(cmd, capture_output=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"chromium exited {p.returncode}: {p.stderr.decode(errors='replace')[-2000:]}")
    err = p.stderr.decode(errors="replace")
    console = [line for line in err.splitlines() if re.search(r":CONSOLE[:(]", line)]
    return p.stdout.decode(errors="replace"), console


def render(page, png=None, dom=None, width=1400, height=2000, timeout=120, binary=None,
           fragment=""):
    """Returns (dom_text, console_lines); writes the screenshot to png if given."""
    binary = binary or find_chromium()
    if not binary:
        raise FileNotFoundError("chromium not found; install Debian's chromium package")
    dom_text, console = chromium(binary, page, ["--dump-dom"], timeout, fragment)
    if dom:
        with open(dom, "w", encoding="utf-8") as f:
            f.write(dom_text)
    if png:
        _, more = chromium(binary, page, [f"--screenshot={os.path.abspath(png)}",
                                          f"--window-size={width},{height}"], timeout, fragment)
        console += more
        if not os.path.exists(png):
            raise RuntimeError("chromium wrote no screenshot")
    return dom_text, console


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page")
    ap.add_argument("--png")
    ap.add_argument("--dom")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=2000)
    ap.add_argument("--fragment", default="", help="URL fragment, e.g. 'layer=0&head=1'")
    a = ap.parse_args()
    try:
        _, console = render(a.page, a.png, a.dom, a.width, a.height, fragment=a.fragment)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"render_page: error: {e}", file=sys.stderr)
        return 1
    for line in console:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
