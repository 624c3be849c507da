"""Records where thumbor 7.8's own Transformer places its crop when the URL gives no manual
crop: every halign x valign, free and `orig` sides, and 1-3 weighted focal points (smart
off, no detectors). The rows complement Tests/DialectTests/ThumborTransformerCasesTests, whose
cases from thumbor's transformer_test_data.py nearly all hand thumbor a manual crop.

  .build/thumbor-venv/bin/python Tests/Fixtures/record-thumbor-placement.py

(the printed rows are the test's `placements` table).

Run it with a Python that has thumbor 7.8 (bench/thumbor-side.sh makes .build/thumbor-venv;
record-thumbor-filters.sh too). Needs nothing from thumbor's repository: the contexts are
built here. Prints the Swift rows of the test's `placements` table, in the format of
record-thumbor-transformer.py (manual: nil; kept: the part of the source thumbor kept, nil
when it did not crop; size: what it made).

Each case runs twice: on SizeEngine (a stand-in that only keeps its size through crops and
resizes, rounding a free side as the real engine does) and on thumbor's real PIL engine over
a blank picture of the source size; the script stops if the two disagree.
"""
import asyncio
import sys

from PIL import Image

import thumbor
from thumbor.config import Config
from thumbor.context import Context, RequestParameters
from thumbor.engines import BaseEngine
from thumbor.engines.pil import Engine as PILEngine
from thumbor.importer import Importer
from thumbor.point import FocalPoint
from thumbor.storages.no_storage import Storage as NoStorage
from thumbor.transformer import Transformer

assert thumbor.__version__ == "7.8.0", f"thumbor {thumbor.__version__}, want 7.8.0"


class SizeEngine(BaseEngine):
    """A picture that is nothing but its size: crop and resize change it as PIL's do, and
    the free side of a request is rounded as thumbor's engines round it."""

    def __init__(self, context, size):
        super().__init__(context)
        self._size = size
        self.extension = ".jpeg"
        self.crops = []

    @property
    def size(self):
        return self._size

    def crop(self, left, top, right, bottom):
        self.crops.append((left, top, right, bottom))
        self._size = (int(right) - int(left), int(bottom) - int(top))

    def resize(self, width, height):
        self._size = (int(width), int(height))

    def reorientate(self, override_exif=True):
        pass  # no EXIF

    def flip_horizontally(self):
        pass

    def flip_vertically(self):
        pass


class RecordingPIL(PILEngine):
    def __init__(self, context, size):
        super().__init__(context)
        self.image = Image.new("L", size)
        self.extension = ".jpeg"
        self.crops = []

    def crop(self, left, top, right, bottom):
        self.crops.append((left, top, right, bottom))
        super().crop(left, top, right, bottom)


def context(make_engine, size, width, height, halign, valign, points):
    config = Config()
    config.RESPECT_ORIENTATION = True
    importer = Importer(config)
    importer.detectors = []
    importer.storage = NoStorage
    ctx = Context(server=None, config=config, importer=importer)
    engine = make_engine(ctx, size)
    ctx.modules.engine = engine
    ctx.request = RequestParameters(
        width=width, height=height, halign=halign, valign=valign, smart=False,
        focal_points=[FocalPoint(x, y, weight=w) for x, y, w in points],
        image="some.jpeg", filters=[], quality=80)
    ctx.request.engine = engine
    return ctx, engine


async def run(make_engine, size, width, height, halign, valign, points):
    ctx, engine = context(make_engine, size, width, height, halign, valign, points)
    await Transformer(ctx).transform()
    x = y = 0
    region = None
    for left, top, right, bottom in engine.crops:  # the crops composed
        x += int(left)
        y += int(top)
        region = (x, y, int(right) - int(left), int(bottom) - int(top))
    return region, tuple(engine.size)


SOURCES = [(800, 400), (400, 800), (1000, 250), (333, 777), (1920, 1280)]
TARGETS = [(200, 200), (300, 100), (100, 300), (0, 150), (150, 0), ("orig", 100)]
HALIGNS = ["left", "center", "right"]
VALIGNS = ["top", "middle", "bottom"]
# (source, target) pairs given all nine alignments; others get the three diagonal ones.
EVERY_ALIGNMENT = {((800, 400), (200, 200)), ((400, 800), (200, 200))}
ORIG_SOURCES = [(800, 400), (333, 777), (1920, 1280)]  # the sources asked for orig x 100

# (source, target, focal points (x, y, weight)), placement by thumbor's centre of mass.
FOCAL = [
    ((800, 400), (200, 200), [(700, 200, 1.0)]),                     # near the right: clamped
    ((800, 400), (200, 200), [(150, 100, 1.0)]),                     # near the left: clamped
    ((800, 400), (200, 200), [(500, 390, 1.0)]),                     # off centre, near the bottom
    ((800, 400), (200, 200), [(0, 0, 1.0)]),                         # on the corner
    ((800, 400), (200, 200), [(800, 400, 1.0)]),                     # on the far corner
    ((800, 400), (200, 200), [(100, 100, 1.0), (700, 300, 3.0)]),    # weighted mean 550
    ((800, 400), (200, 200), [(100, 200, 0.25), (700, 200, 0.75)]),  # fractional weights
    ((800, 400), (200, 200), [(301, 10, 1.0), (302, 390, 1.0)]),     # mean 301.5, floored
    ((800, 400), (400, 200), [(700, 50, 1.0)]),                      # same ratio: no crop
    ((800, 400), ("orig", 100), [(400, 390, 1.0)]),                  # vertical, clamped low
    ((800, 400), ("orig", 100), [(10, 120, 2.0), (790, 20, 1.0)]),   # vertical, mean 86
    ((400, 800), (200, 200), [(200, 780, 1.0)]),
    ((400, 800), (200, 200), [(20, 250, 1.0), (380, 450, 1.0), (200, 300, 2.0)]),
    ((400, 800), (100, 300), [(390, 400, 1.0)]),                     # crop 267 wide (ceil)
    ((400, 800), (100, 300), [(180, 400, 1.0)]),                     # 180 - 133.5 = 46.5 -> 46
    ((400, 800), (100, 300), [(181, 400, 1.0)]),                     # 47.5 -> 48
    ((1000, 250), (300, 100), [(50, 125, 1.0)]),
    ((1000, 250), (300, 100), [(900, 10, 2.0), (600, 240, 1.0)]),    # mean 800, clamped to 250
    ((1000, 250), (300, 100), [(100, 0, 1.0), (500, 250, 1.0), (700, 125, 2.0)]),
    ((1000, 250), (200, 200), [(990, 5, 1.0)]),
    ((333, 777), (200, 200), [(166, 389, 1.0)]),                     # 389 - 166.5 = 222.5 -> 222
    ((333, 777), (200, 200), [(166, 390, 1.0)]),                     # 223.5 -> 224
    ((333, 777), (200, 200), [(10, 100, 1.0), (300, 700, 2.0), (166, 389, 0.5)]),
    ((333, 777), (300, 100), [(5, 770, 1.0)]),
    ((1920, 1280), (300, 100), [(960, 50, 1.0)]),
    ((1920, 1280), (300, 100), [(200, 1000, 1.0), (1800, 1250, 1.0)]),
    ((1920, 1280), (100, 300), [(1000, 640, 1.0)]),                  # 427 wide: 786.5 -> 786
    ((1920, 1280), (100, 300), [(1001, 640, 1.0)]),                  # 787.5 -> 788
    ((1920, 1280), (100, 300), [(1900, 10, 1.0), (1700, 1270, 1.0), (40, 640, 1.0)]),
]

# Near-equal ratios: thumbor compares them rounded to 2 decimals and, when equal, does not
# crop but resizes to the asked size (a slight stretch).
NEAR_RATIO = [((1920, 1280), (302, 201)), ((1920, 1280), (299, 200)), ((333, 777), (100, 233))]


def side(v):
    return '"orig"' if v == "orig" else str(int(v))


def row(size, target, halign, valign, points, region, out):
    fps = "[" + ", ".join(f"({x}, {y}, {float(w)})" for x, y, w in points) + "]"
    r = "nil" if region is None else f"({region[0]}, {region[1]}, {region[2]}, {region[3]})"
    return (f'        .init({size[0]}, {size[1]}, {side(target[0])}, {side(target[1])}, "{halign}", "{valign}", '
            f"{fps}, manual: nil, fit: nil, kept: {r}, size: ({out[0]}, {out[1]})),")


async def case(size, target, halign, valign, points=()):
    points = list(points)
    got = await run(SizeEngine, size, *target, halign, valign, points)
    real = await run(RecordingPIL, size, *target, halign, valign, points)
    if got != real:
        sys.exit(f"{size} {target} {halign} {valign} {points}: SizeEngine {got}, PIL engine {real}")
    return row(size, target, halign, valign, points, *got)


async def main():
    rows = []
    for size in SOURCES:
        for target in TARGETS:
            region, _ = await run(SizeEngine, size, *target, "center", "middle", [])
            if target == ("orig", 100) and size not in ORIG_SOURCES:
                continue
            if (size, target) in EVERY_ALIGNMENT:
                aligns = [(h, v) for v in VALIGNS for h in HALIGNS]
            elif region is None:
                # No crop: the alignment cannot matter; one row, and one off-centre for the first.
                aligns = [("center", "middle")] + ([("right", "bottom")] if (size, target) == (SOURCES[0], (0, 150)) else [])
            else:
                aligns = list(zip(HALIGNS, VALIGNS))
            for h, v in aligns:
                rows.append(await case(size, target, h, v))
    for size, target in NEAR_RATIO:
        rows.append(await case(size, target, "left", "top"))
    for size, target, points in FOCAL:
        # Alignment is ignored once there are focal points; vary it to show that.
        h, v = [("left", "top"), ("right", "bottom"), ("center", "middle")][len(rows) % 3]
        rows.append(await case(size, target, h, v, points))
    print("\n".join(rows))
    print(f"{len(rows)} rows", file=sys.stderr)


asyncio.run(main())
