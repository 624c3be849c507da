#!/usr/bin/env python3
"""Aspect's thumbor URLs held side by side against the real thumbor (issue 40).

Both servers read the same folder of photos; every URL made from thumbor's grammar is
asked of both, and per URL the tool reports the status of each, whether the sizes agree,
and the SSIM between the two pictures (greyscale, both flattened on white) where the sizes
agree. Run by bench/thumbor-side.sh, which starts the servers; this file only asks them.

  thumbor_side.py THUMBOR_BASE ASPECT_BASE IMAGES_DIR REPORT.md
"""
import io
import itertools
import sys
import urllib.error
import urllib.request

import numpy as np
from PIL import Image, ImageOps

SSIM_MATCH = 0.90  # below this, the two pictures are called different


def urls():
    """The URLs: sizes x fit-in kinds x images, alignments, flips, crops, filters, trims."""
    out = []
    images = ["big.jpg", "portrait.jpg", "medium.jpg", "alpha.png"]
    sizes = ["300x200", "200x300", "300x0", "0x200", "300x300", "50x50", "1200x900", "origx200",
             "300xorig", "0x0"]
    fits = ["", "fit-in/", "full-fit-in/", "adaptive-fit-in/", "adaptive-full-fit-in/"]
    for img, size, fit in itertools.product(images, sizes, fits):
        out.append(f"{fit}{size}/{img}")
    for img, (h, v), size in itertools.product(
            ["big.jpg", "portrait.jpg"], itertools.product(["left", "center", "right"], ["top", "middle", "bottom"]),
            ["300x300", "200x100"]):
        out.append(f"{size}/{h}/{v}/{img}")
    for img, size in itertools.product(["big.jpg", "portrait.jpg"], ["-300x200", "300x-200", "-300x-200",
                                                                    "fit-in/-300x-300"]):
        out.append(f"{size}/{img}")
    for img, crop, size in itertools.product(["big.jpg", "medium.jpg"], ["10x10:400x300", "100x50:600x450"],
                                             ["0x0", "200x0", "100x100", "fit-in/150x150"]):
        out.append(f"{crop}/{size}/{img}")
    filters = ["quality(40)", "format(webp)", "format(png)", "fill(red)", "fill(00ff00)", "fill(blur)",
               "fill(auto)", "blur(5)", "blur(8,4)", "round_corner(20,255,255,255)", "no_upscale()", "upscale()",
               "proportion(0.5)", "background_color(ff0000)", "focal(100x100:300x250)", "rotate(90)", "rotate(180)",
               "rotate(270)", "grayscale()", "strip_icc()", "strip_exif()", "max_bytes(15000)",
               "quality(60):rotate(90):grayscale()", "proportion(0.5):fill(blue)"]
    for img, f, size in itertools.product(["big.jpg", "alpha.png"], filters, ["300x200", "fit-in/300x300",
                                                                                "fit-in/2000x2000"]):
        out.append(f"{size}/filters:{f}/{img}")
    for img, t, size in itertools.product(["bordered.png", "framed.png"],
                                          ["trim", "trim:bottom-right", "trim:top-left:10", "trim:20"],
                                          ["0x0", "100x0", "fit-in/100x100", "30x40:300x200/0x0"]):
        out.append(f"{t}/{size}/{img}")
    return ["/unsafe/" + u for u in out]


def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except Exception as e:  # a refused or reset connection: reported as the status
        return f"error: {e}", b""


def picture(data):
    img = Image.open(io.BytesIO(data))
    img.load()
    if img.mode in ("RGBA", "LA", "P"):
        img = img.convert("RGBA")
        white = Image.new("RGBA", img.size, (255, 255, 255, 255))
        img = Image.alpha_composite(white, img)
    return img.convert("L")


def ssim(a, b):
    """Mean SSIM over 7x7 windows (Wang et al. 2004's constants), by integral images."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if min(x.shape) < 7:
        return float(1 - np.abs(x - y).mean() / 255)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2

    def box(m):
        s = np.pad(m, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
        return (s[7:, 7:] - s[:-7, 7:] - s[7:, :-7] + s[:-7, :-7]) / 49

    mx, my = box(x), box(y)
    vx, vy, cxy = box(x * x) - mx * mx, box(y * y) - my * my, box(x * y) - mx * my
    m = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return float(m.mean())


def main():
    thumbor, aspect, _images, report = sys.argv[1:5]
    rows = []
    for u in urls():
        ts, tb = fetch(thumbor + u)
        as_, ab = fetch(aspect + u)
        row = {"url": u, "thumbor": ts, "aspect": as_, "tsize": None, "asize": None, "ssim": None}
        if ts == 200:
            row["tsize"] = Image.open(io.BytesIO(tb)).size
        if as_ == 200:
            row["asize"] = Image.open(io.BytesIO(ab)).size
        if row["tsize"] and row["tsize"] == row["asize"]:
            row["ssim"] = ssim(picture(tb), picture(ab))
        rows.append(row)

    both = [r for r in rows if r["thumbor"] == 200 and r["aspect"] == 200]
    same_size = [r for r in both if r["tsize"] == r["asize"]]
    alike = [r for r in same_size if r["ssim"] >= SSIM_MATCH]
    status_differs = [r for r in rows if r["thumbor"] != r["aspect"]]
    size_differs = [r for r in both if r["tsize"] != r["asize"]]
    unlike = [r for r in same_size if r["ssim"] < SSIM_MATCH]
    ssims = sorted(r["ssim"] for r in same_size)
    lines = [
        f"URLs asked: {len(rows)}",
        f"both 200: {len(both)}; same size: {len(same_size)}; "
        f"SSIM >= {SSIM_MATCH}: {len(alike)}",
        f"status differs: {len(status_differs)}; size differs: {len(size_differs)}; "
        f"SSIM < {SSIM_MATCH}: {len(unlike)}",
    ]
    if ssims:
        lines.append(f"SSIM where the sizes agree: min {ssims[0]:.3f}, median {ssims[len(ssims) // 2]:.3f}")
    print("\n".join(lines))
    with open(report, "w") as f:
        f.write("# Aspect against thumbor 7.8, URL by URL\n\n" + "\n\n".join(lines) + "\n\n")
        f.write("| URL | thumbor | Aspect | thumbor size | Aspect size | SSIM |\n|---|---|---|---|---|---|\n")
        for r in rows:
            def size(s):
                return f"{s[0]}x{s[1]}" if s else ""
            f.write(f"| `{r['url']}` | {r['thumbor']} | {r['aspect']} | {size(r['tsize'])} | "
                    f"{size(r['asize'])} | {'' if r['ssim'] is None else format(r['ssim'], '.3f')} |\n")
    print("disagreements:")
    for r in status_differs + size_differs + unlike:
        print(f"  {r['url']}: thumbor {r['thumbor']} {r['tsize']}, aspect {r['aspect']} {r['asize']}, "
              f"ssim {r['ssim']}")


if __name__ == "__main__":
    main()
