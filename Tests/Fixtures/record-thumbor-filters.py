"""Writes Tests/Fixtures/thumbor-filters.json: what the real thumbor 7.8 (PyPI, PIL engine)
answers for a few filter URLs whose behaviour Aspect must match (fill over transparency,
blur(0), rotate by non-right angles, grayscale, an unknown format). CI cannot run thumbor,
so the answers are recorded once; run through Tests/Fixtures/record-thumbor-filters.sh.

  python record-thumbor-filters.py [PHOTOS_DIR] [OUT_JSON]

Run it with the Python of a venv holding thumbor==7.8.0 and numpy (the .sh makes
.build/thumbor-venv as bench/thumbor-side.sh does). It starts thumbor on 127.0.0.1 (port
THUMBOR_PORT, else a free one) over a temporary folder holding copies of medium.jpg and
alpha.png and a picture it draws (halfclear.png, see DRAWN), asks every URL of CASES and
stops the server. Each answer is kept with a coarse fingerprint of its pixels that an
encoder's rounding does not move much (see CELL_RULE).
"""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from io import BytesIO

import numpy as np
from PIL import Image

ROOT = pathlib.Path(__file__).resolve().parents[2]
PHOTOS = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".build/photos"
OUT = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "Tests/Fixtures/thumbor-filters.json"

COLS, ROWS = 8, 6
CELL_RULE = (
    "cells[r][c] (r = 0..5 from the top, c = 0..7 from the left) covers the output pixels with "
    "floor(c*width/8) <= x < floor((c+1)*width/8) and floor(r*height/6) <= y < floor((r+1)*height/6); "
    "it holds one number per channel of the decoded output's mode (RGB: r,g,b; L: l; RGBA: r,g,b,a; "
    "LA: l,a), the mean over the cell rounded to 0.1. With an alpha channel, the colour channels are "
    "premultiplied first (mean of c*a/255: the cell's colour over black, whatever an encoder stores under "
    "transparent pixels) and the last number is the plain alpha mean."
)

# The drawn picture. The Swift test draws the same one.
DRAWN_NAME = "halfclear.png"
DRAWN = {
    "name": DRAWN_NAME,
    "width": 200,
    "height": 150,
    "mode": "RGBA, 8 bits a channel, non-premultiplied",
    "pixels": "x < 100: (0, 0, 0, 0), fully transparent black; x >= 100: (30, 144, 255, 255), opaque",
}


def draw(path):
    im = Image.new("RGBA", (200, 150), (0, 0, 0, 0))
    im.paste(Image.new("RGBA", (100, 150), (30, 144, 255, 255)), (100, 0))
    im.save(path, "PNG")


def fill_urls(name):
    return [
        f"/unsafe/200x0/filters:fill(red,1)/{name}",
        f"/unsafe/200x0/filters:fill(red)/{name}",
        f"/unsafe/200x0/filters:fill(red,1):format(png)/{name}",
    ]


CASES = [
    *fill_urls(DRAWN_NAME),
    *fill_urls("alpha.png"),
    "/unsafe/300x200/filters:blur(0)/medium.jpg",
    "/unsafe/300x200/medium.jpg",
    "/unsafe/300x200/filters:rotate(45)/medium.jpg",
    "/unsafe/300x200/filters:rotate(90)/medium.jpg",
    "/unsafe/300x200/filters:rotate(135)/medium.jpg",
    "/unsafe/300x200/filters:rotate(-90)/medium.jpg",
    "/unsafe/300x200/filters:grayscale()/medium.jpg",
    "/unsafe/300x200/filters:grayscale():format(png)/medium.jpg",
    "/unsafe/300x200/filters:format(png)/medium.jpg",
    "/unsafe/300x200/filters:format(tiff)/medium.jpg",
]

CONF = """\
LOADER = 'thumbor.loaders.file_loader'
FILE_LOADER_ROOT_PATH = {root!r}
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = None
RESULT_STORAGE_STORES_UNSAFE = False
ALLOW_UNSAFE_URL = True
ENGINE = 'thumbor.engines.pil'
QUALITY = 80
PROGRESSIVE_JPEG = False
RESPECT_ORIENTATION = True
PRESERVE_EXIF_INFO = False
AUTO_WEBP = False
AUTO_PNG_TO_JPG = False
DETECTORS = []
OPTIMIZERS = []
MAX_AGE = 0
"""


def cells(im):
    a = np.asarray(im, dtype=np.float64)
    if a.ndim == 2:
        a = a[..., None]
    h, w = a.shape[:2]
    alpha = im.mode in ("RGBA", "LA")
    rows = []
    for r in range(ROWS):
        y0, y1 = r * h // ROWS, (r + 1) * h // ROWS
        row = []
        for c in range(COLS):
            x0, x1 = c * w // COLS, (c + 1) * w // COLS
            cell = a[y0:y1, x0:x1].reshape(-1, a.shape[2])
            if alpha:
                values = list((cell[:, :-1] * cell[:, -1:] / 255).mean(axis=0)) + [cell[:, -1].mean()]
            else:
                values = list(cell.mean(axis=0))
            row.append([round(float(v), 1) for v in values])
        rows.append(row)
    return rows


def ask(base, url):
    try:
        with urllib.request.urlopen(base + url, timeout=60) as r:
            status, ctype, body = r.status, r.headers.get("Content-Type"), r.read()
    except urllib.error.HTTPError as e:
        status, ctype, body = e.code, e.headers.get("Content-Type"), e.read()
    entry = {"url": url, "status": status, "contentType": ctype, "magic": body[:8].hex()}
    try:
        im = Image.open(BytesIO(body))
        im.load()
    except Exception:  # not a picture (an error page)
        entry.update(width=None, height=None, mode=None, cells=None)
        return entry
    if im.mode not in ("RGB", "RGBA", "L", "LA"):
        im = im.convert("RGBA" if "A" in im.mode or "transparency" in im.info else "RGB")
    entry.update(width=im.width, height=im.height, mode=im.mode, cells=cells(im))
    return entry


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dump(doc):
    """JSON with one line per case header and one line per row of cells."""
    lines = ["{"]
    for key in ("generator", "config", "cellRule", "drawn"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(doc[key], ensure_ascii=False)},")
    lines.append('  "cases": [')
    for i, e in enumerate(doc["cases"]):
        head = {k: v for k, v in e.items() if k != "cells"}
        lines.append("    " + json.dumps(head)[:-1] + ', "cells":' + (" null" if e["cells"] is None else ""))
        if e["cells"] is not None:
            lines.append("      [")
            for j, row in enumerate(e["cells"]):
                lines.append("        " + json.dumps(row) + ("," if j < len(e["cells"]) - 1 else ""))
            lines.append("      ]")
        lines.append("    }" + ("," if i < len(doc["cases"]) - 1 else ""))
    lines.append("  ]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == json.loads(json.dumps(doc))
    return text


def main():
    import thumbor

    for f in ("medium.jpg", "alpha.png"):
        if not (PHOTOS / f).is_file():
            sys.exit(f"no {PHOTOS / f} (scripts/fetch-photos.sh puts the photos there)")
    work = pathlib.Path(tempfile.mkdtemp(prefix="thumbor-filters-"))
    proc = None
    try:
        images = work / "images"
        images.mkdir()
        for f in ("medium.jpg", "alpha.png"):
            shutil.copy(PHOTOS / f, images / f)
        draw(images / DRAWN_NAME)
        (work / "thumbor.conf").write_text(CONF.format(root=str(images)))
        port = int(os.environ.get("THUMBOR_PORT") or free_port())
        exe = pathlib.Path(sys.executable).parent / "thumbor"
        log = open(work / "thumbor.log", "w")
        proc = subprocess.Popen(
            [str(exe), "--ip=127.0.0.1", f"--port={port}", f"--conf={work / 'thumbor.conf'}", "--log-level=error"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                urllib.request.urlopen(base + "/healthcheck", timeout=2).read()
                break
            except Exception:
                if proc.poll() is not None:
                    sys.exit("thumbor stopped:\n" + (work / "thumbor.log").read_text())
                time.sleep(0.5)
        else:
            sys.exit("thumbor did not answer /healthcheck")
        results = [ask(base, url) for url in CASES]
    finally:
        if proc is not None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    doc = {
        "generator": f"thumbor {thumbor.__version__} (PyPI, PIL engine), Tests/Fixtures/record-thumbor-filters.py",
        "config": "RESPECT_ORIENTATION=True, RESULT_STORAGE=None, ALLOW_UNSAFE_URL=True, QUALITY=80, "
                  "PROGRESSIVE_JPEG=False, AUTO_WEBP=False, no detectors, no optimizers; "
                  "sources: medium.jpg and alpha.png of scripts/fetch-photos.sh, and the drawn picture",
        "cellRule": CELL_RULE,
        "drawn": DRAWN,
        "cases": results,
    }
    OUT.write_text(dump(doc))
    for e in results:
        print(f'{e["status"]} {e["contentType"]} {e["width"]}x{e["height"]} {e["mode"]} {e["url"]}')
    print(f"wrote {OUT}", file=sys.stderr)


main()
