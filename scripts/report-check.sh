#!/bin/bash
# Open a jeirt report page in headless Chromium, take a screenshot and check
# that it is not blank: the page must render offline (no network), and the
# screenshot must show many colours (figures), not a white or single-colour page.
# Then check the figures' layout where a mistake is easy to see in pixels:
# the legend of the item characteristic curves (icc.png) must lie beside the
# plot, right of the end of its x axis, not over the curves. Look at the
# screenshot and the PNGs as well: ticks and labels are for eyes.
#
#   scripts/report-check.sh report/index.html [screenshot.png]
#
# Installs Debian's chromium package when no chromium is on PATH (needs root
# and apt). Exits 0 when the check passes, 1 when the screenshot is blank.
set -euo pipefail

page="${1:?usage: scripts/report-check.sh REPORT/index.html [SCREENSHOT.png]}"
shot="${2:-$(dirname "$page")/screenshot.png}"
if [[ ! -f "$page" ]]; then
  echo "report-check: $page does not exist (write it with jeirt report --out DIR)" >&2
  exit 2
fi
page="$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
mkdir -p "$(dirname "$shot")"
shot="$(cd "$(dirname "$shot")" && pwd)/$(basename "$shot")"

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then
    browser="$b"
    break
  fi
done
if [[ -z "$browser" ]]; then
  echo "report-check: installing Debian's chromium (apt-get install -y chromium)" >&2
  if [[ "$(id -u)" != 0 ]]; then
    echo "report-check: no chromium on PATH and not root: install the chromium package first" >&2
    exit 2
  fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  browser=chromium
fi

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
rm -f "$shot"
# --disable-quic etc. keep Chromium from reaching out on its own; the page
# itself loads nothing from the network.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$profile" \
  --window-size=1280,2000 --screenshot="$shot" "file://$page" >"$profile/chromium.log" 2>&1 || {
  echo "report-check: $browser failed:" >&2
  tail -20 "$profile/chromium.log" >&2
  exit 1
}
if [[ ! -s "$shot" ]]; then
  echo "report-check: $browser wrote no screenshot" >&2
  tail -20 "$profile/chromium.log" >&2
  exit 1
fi

# Not blank: count distinct colours and non-white pixels (python3, standard
# library only: a small PNG decoder for 8-bit RGB/RGBA, non-interlaced).
python3 - "$shot" "$(dirname "$page")" <<'PY'
import os, struct, sys, zlib


def decode(path):
    """The rows of an 8-bit RGB/RGBA non-interlaced PNG, as bytearrays, and its bytes per pixel."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"report-check: {path} is not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit(f"report-check: {path}: unexpected PNG format (depth {depth}, colour type {ctype}, interlace {interlace})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev, rows = bytearray(stride), []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


icc = os.path.join(sys.argv[2], "icc.png")
if os.path.exists(icc):
    w, h, bpp, rows = decode(icc)
    dark = lambda px: px[0] < 80 and px[1] < 80 and px[2] < 80
    # The x axis is the lowest row with the longest run of dark pixels.
    best = (0, 0, 0)
    for y in range(h // 2, h):
        run = start = 0
        for x in range(w):
            if dark(rows[y][x * bpp:x * bpp + 3]):
                if run == 0:
                    start = x
                run += 1
                if run > best[0]:
                    best = (run, y, start + run)
            else:
                run = 0
    _, axis_y, axis_end = best
    # Legend text: dark pixels right of the axis' end, above it.
    beside = sum(1 for y in range(axis_y) for x in range(axis_end + 4, w) if dark(rows[y][x * bpp:x * bpp + 3]))
    print(f"report-check: {icc}: x axis ends at x={axis_end} of {w}; {beside} dark (text) pixels right of it")
    if beside < 200:
        sys.exit("report-check: FAIL: the ICC legend is not beside the plot (it covers the curves)")

path = sys.argv[1]
w, h, bpp, rows = decode(path)
colours, nonwhite = set(), 0
for line in rows:
    for x in range(0, w * bpp, bpp * 2):  # every other pixel is plenty
        px = bytes(line[x:x + 3])
        colours.add(px)
        if px != b"\xff\xff\xff":
            nonwhite += 1
sampled = h * ((w + 1) // 2)
share = nonwhite / sampled
print(f"report-check: {path}: {w}x{h}, {len(colours)} distinct colours, {100 * share:.1f}% non-white pixels")
if len(colours) < 64 or share < 0.02:
    sys.exit("report-check: FAIL: the screenshot is (nearly) blank")
print("report-check: OK: the page renders offline and is not blank")
PY
