#!/usr/bin/env python3
"""Check that a sweep's report.html lays out without overflow in headless Chromium at a given width.

    scripts/check_report.py sweep-out/report.html [--width 1400] [--height 900] [--browser /usr/bin/chromium]

Loads a copy of the page with a small script appended that measures, after layout, the page's
scroll width and every element whose box passes the viewport's right edge or whose content is
wider than its box (a table cell, a code span, an image); ``chromium --headless --dump-dom`` prints
the DOM the script wrote its findings into, with where the verdict (``#verdict``) lies. Exit 0 when
nothing overflows and the verdict is whole in the first screen (``--height``), 1 with the offenders
listed, 2 when no Chromium is found (set --browser or CHROMIUM).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_PROBE = """
<script>
window.addEventListener('load', function () {
  var w = window.innerWidth, bad = [];
  var all = document.body.getElementsByTagName('*');
  for (var i = 0; i < all.length; i++) {
    var el = all[i], r = el.getBoundingClientRect();
    if (el.tagName === 'SCRIPT' || el.id === 'overflow-probe') continue;
    var what = el.tagName.toLowerCase() + ': ' + (el.textContent || el.getAttribute('alt') || '').slice(0, 60);
    if (r.right > w + 0.5) bad.push('past the right edge (' + Math.round(r.right) + ' px) ' + what);
    else if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 && getComputedStyle(el).overflowX !== 'visible')
      bad.push('content wider than its box ' + what);
  }
  var doc = document.documentElement, v = document.getElementById('verdict'), box = null;
  if (v) { var b = v.getBoundingClientRect(); box = {top: b.top, bottom: b.bottom, left: b.left, right: b.right}; }
  var out = {width: w, height: window.innerHeight, scrollWidth: doc.scrollWidth, verdict: box,
             offenders: bad.slice(0, 50)};
  var probe = document.createElement('pre');
  probe.id = 'overflow-probe';
  probe.textContent = JSON.stringify(out);
  document.body.appendChild(probe);
});
</script>
"""


def find_browser(given: str | None) -> str | None:
    for candidate in (given, os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome",
                      "google-chrome-stable"):
        if candidate and (shutil.which(candidate) or Path(candidate).exists()):
            return shutil.which(candidate) or candidate
    return None


def check(report: Path, width: int, browser: str, height: int = 900) -> dict:
    """{width, height, scrollWidth, verdict (its box, or None), offenders} measured in headless Chromium."""
    text = report.read_text()
    probed = text.replace("</body>", _PROBE + "</body>") if "</body>" in text else text + _PROBE
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(probed)
        done = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--window-size={width},{height}", "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120,
        )
    found = re.search(r'<pre id="overflow-probe">(.*?)</pre>', done.stdout, re.S)
    if not found:
        raise RuntimeError(f"the probe did not run (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    import html

    return json.loads(html.unescape(found.group(1)))


def verdict_in_first_screen(result: dict) -> bool:
    """The ``#verdict`` element is there and lies whole inside the first screen."""
    box = result.get("verdict")
    return bool(box) and box["top"] >= 0 and box["bottom"] <= result["height"] and box["left"] >= 0 \
        and box["right"] <= result["width"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=900, help="the first screen's height (default 900)")
    parser.add_argument("--browser", default=None)
    args = parser.parse_args()
    browser = find_browser(args.browser)
    if browser is None:
        print("no Chromium found (set --browser or CHROMIUM)", file=sys.stderr)
        return 2
    result = check(args.report, args.width, browser, args.height)
    ok = result["scrollWidth"] <= result["width"] and not result["offenders"] and verdict_in_first_screen(result)
    print(f"{args.report}: viewport {result['width']} x {result['height']} px, page scroll width "
          f"{result['scrollWidth']} px, {len(result['offenders'])} overflowing elements, verdict "
          f"{'whole in the first screen' if verdict_in_first_screen(result) else 'NOT whole in the first screen'}"
          f" ({result['verdict']})")
    for line in result["offenders"]:
        print(f"  {line}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
