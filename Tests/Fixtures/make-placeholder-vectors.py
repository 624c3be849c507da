"""Writes Tests/Fixtures/placeholder-vectors.json: small RGBA images (made here, and the
team's photos shrunk by Pillow to fit 100x100) with their ThumbHash by PyPI's `thumbhash`
and their BlurHash (4x3 components) by PyPI's `blurhash`. The Swift encoders must give the
same strings for the same pixels.

`thumbhash` 0.1.2 cannot encode an image with alpha (its alpha channel line builds a tuple),
so the vectors with alpha carry no ThumbHash; the tests decode ours back for those."""
import base64, json, math, os
import blurhash, thumbhash
from PIL import Image

def synthetic():
    def make(name, w, h, f):
        px = []
        for y in range(h):
            for x in range(w):
                px += f(x, y)
        yield name, w, h, px
    yield from make("gradient 100x75", 100, 75, lambda x, y: [x * 255 // 99, y * 255 // 74, 128, 255])
    yield from make("stripes 60x100", 60, 100, lambda x, y: [200, 40, 40, 255] if (y // 10) % 2 else [30, 60, 200, 255])
    yield from make("checker 32x32", 32, 32, lambda x, y: [240, 240, 240, 255] if (x // 8 + y // 8) % 2 else [20, 20, 20, 255])
    yield from make("sunset 100x40", 100, 40, lambda x, y: [255, 120 + y * 3, 40 + x, 255])
    yield from make("disc on clear 64x64", 64, 64,
                    lambda x, y: [250, 180, 20, 255 if (x - 32) ** 2 + (y - 32) ** 2 < 700 else 0])

def photos():
    root = os.path.join("..", "shared", "images")
    for name in ["medium.jpg", "portrait.jpg", "alpha.png"]:
        img = Image.open(os.path.join(root, name)).convert("RGBA")
        img.thumbnail((100, 100))
        yield name, img.width, img.height, [c for p in img.getdata() for c in p]

vectors = []
for name, w, h, rgba in list(synthetic()) + list(photos()):
    has_alpha = any(rgba[i] < 255 for i in range(3, len(rgba), 4))
    rows = [[rgba[(y * w + x) * 4:(y * w + x) * 4 + 3] for x in range(w)] for y in range(h)]
    vectors.append({
        "name": name, "width": w, "height": h,
        "rgba": base64.b64encode(bytes(rgba)).decode(),
        "thumbhash": None if has_alpha else base64.b64encode(bytes(thumbhash.rgba_to_thumb_hash(w, h, rgba))).decode(),
        "blurhash": blurhash.encode(rows, 4, 3),
    })
with open("Tests/Fixtures/placeholder-vectors.json", "w") as f:
    json.dump({"generator": "thumbhash 0.1.2, blurhash 1.1.5 (PyPI)", "vectors": vectors}, f, indent=1)
    f.write("\n")
print(f"{len(vectors)} vectors")
