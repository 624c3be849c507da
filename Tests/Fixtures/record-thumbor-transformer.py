"""Records what thumbor's own Transformer does with the cases of its
tests/fixtures/transformer_test_data.py (for Tests/DialectTests/ThumborTransformerCasesTests).

  python record-thumbor-transformer.py PATH/TO/transformer_test_data.py

Run it with a Python that has thumbor 7.8 (bench/thumbor-side.sh makes .build/thumbor-venv);
the fixture file comes from thumbor's repository (it is not in the PyPI package). Prints
the Swift rows of the test's table.
"""
import asyncio
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("transformer_test_data", sys.argv[1])
D = importlib.util.module_from_spec(spec)
spec.loader.exec_module(D)
from thumbor.transformer import Transformer
from thumbor.threadpool import ThreadPool
if not hasattr(ThreadPool, "reset"):
    ThreadPool.reset = classmethod(lambda cls: None)
else:
    ThreadPool._instance = None

class SizeEngine(D.MockEngine):
    """thumbor's test engine, made to keep its size through crops and resizes as a real
    engine does, with the real engine's rounded proportional sides."""
    def crop(self, left, top, right, bottom):
        super().crop(left, top, right, bottom)
        self.size = (int(right) - int(left), int(bottom) - int(top))
    def resize(self, width, height):
        super().resize(width, height)
        self.size = (int(width), int(height))
    def get_proportional_width(self, h):
        w0, h0 = self.size
        return round(float(h) * w0 / h0, 0)
    def get_proportional_height(self, w):
        w0, h0 = self.size
        return round(float(w) * h0 / w0, 0)
D.MockEngine = SizeEngine

def side(v):
    return '"orig"' if v == "orig" else str(int(v))

async def main():
    out = []
    for items in (D.TESTITEMS, [t for t, _ in D.FIT_IN_CROP_DATA]):
        for item in items:
            if item.stretch or item.meta:
                continue
            tw, th = item.target_width, item.target_height
            manual = None if item.crop_left is None else (int(item.crop_left), int(item.crop_top), int(item.crop_right), int(item.crop_bottom))
            fps = "[" + ", ".join(f"({p.x}, {p.y}, {float(p.weight)})" for p in (item.focal_points or [])) + "]"
            ctx = item.to_context()
            await Transformer(ctx).transform()
            calls = item.engine.calls
            # The part of the source kept: the crops composed (each in the picture as it then was).
            x = y = 0
            region = None
            for c in calls["crop"]:
                x += int(c["left"]); y += int(c["top"])
                region = (x, y, int(c["right"]) - int(c["left"]), int(c["bottom"]) - int(c["top"]))
            w, h = item.engine.size
            m = "nil" if manual is None else f"({manual[0]}, {manual[1]}, {manual[2]}, {manual[3]})"
            r = "nil" if region is None else f"({region[0]}, {region[1]}, {region[2]}, {region[3]})"
            ha = "center" if item.halign == "middle" else item.halign
            out.append(f'        .init({item.source_width}, {item.source_height}, {side(tw)}, {side(th)}, "{ha}", "{item.valign}", {fps}, manual: {m}, fit: {"nil" if not item.fit_in else (".adaptiveFull" if item.adaptive and item.full else ".adaptive" if item.adaptive else ".full" if item.full else ".fitIn")}, kept: {r}, size: ({w}, {h})),')
    print("\n".join(out))
asyncio.run(main())
