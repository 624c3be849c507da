"""imgproxy URLs as a real client library builds them (pyimgproxy 0.4, from PyPI), signed
with a key and salt, for ImgproxyClientTests: prints a JSON list of {name, url, size}, the
size (width, height) SPEC gives on the sample landscape (2400×1600), or "refused" for an
option the library emits that Aspect answers with a 400 naming it, and the effect the test
checks beyond the size.

  python imgproxy-client.py BASE KEY_HEX SALT_HEX
"""
import json
import sys

from pyimgproxy import ImgProxy

base, key, salt = sys.argv[1:4]
proxy = ImgProxy(url=base, key=key, salt=salt)
image = proxy.image("landscape.jpg")
# Sources the test puts beside the samples, where an option has something to act on:
# medium.jpg is a photograph (1920×1280), signed.jpg carries EXIF Copyright, p3.jpg a
# Display P3 profile.
photo = proxy.image("medium.jpg")

# (name, URL, size, effect): the effect names what ImgproxyClientTests checks beyond the
# size, against the plain `width(300)` of the same source ("" for a size-only option).
supported = [
    ("resize fit", image.resize("fit", 300, 300), (300, 200), ""),
    ("resize fill", image.resize("fill", 300, 300), (300, 300), ""),
    ("resize fill-down", image.resize("fill-down", 3000, 1000), (2400, 800), ""),
    ("resize force", image.resize("force", 300, 100), (300, 100), ""),
    ("resize auto", image.resize("auto", 300, 400), (300, 200), ""),
    ("size", image.size(300, 0), (300, 200), ""),
    ("resizing_type, width, height", image.resizing_type("fill").width(200).height(200), (200, 200), ""),
    ("width", image.width(600), (600, 400), ""),
    ("height", image.height(100), (150, 100), ""),
    ("min_width", image.min_width(3000), (3000, 2000), ""),
    ("min_height", image.min_height(2000), (3000, 2000), ""),
    ("zoom", image.zoom(0.5), (1200, 800), ""),
    ("dpr", image.dpr(2).width(100), (200, 133), ""),
    ("enlarge", image.enlarge(True).width(3000), (3000, 2000), ""),
    ("extend", image.resize("fit", 300, 300).extend(True), (300, 300), ""),
    ("extend_aspect_ratio", image.width(300).height(300).extend_aspect_ratio(True), (300, 300), ""),
    ("gravity", image.gravity("nowe").resize("fill", 300, 300), (300, 300), ""),
    ("crop", image.crop(1000, 1000).width(100), (100, 100), ""),
    # The drawn landscape's top 107 rows are one colour (its sky): the trim cuts them (2400×1493 left).
    ("trim", image.trim(10).width(300), (300, 187), ""),
    ("padding", image.padding(10).width(300), (320, 220), ""),
    # The sample portrait is stored turned (EXIF Orientation 6): kept as stored, it is wide.
    ("auto_rotate", proxy.image("portrait.jpg").auto_rotate(False).width(300), (300, 200), ""),
    ("rotate", image.rotate(90).width(300), (300, 450), ""),
    # The logo's transparent corners, flattened onto red in a JPEG.
    ("background", proxy.image("logo.png").background(hex_color="ff0000").format("jpg").width(300), (300, 300), "red corner"),
    ("blur", photo.blur(2).width(300).format("png"), (300, 200), "smoother"),
    ("sharpen", photo.sharpen(1).width(300).format("png"), (300, 200), "sharper"),
    ("pixelate", photo.pixelate(5).width(300).format("png"), (300, 200), "blocks of 5"),
    ("strip_metadata", proxy.image("signed.jpg").strip_metadata(True).width(100), (100, 50), "no copyright"),
    ("keep_copyright", proxy.image("signed.jpg").keep_copyright(True).width(100), (100, 50), "copyright"),
    ("strip_color_profile", proxy.image("p3.jpg").strip_color_profile(True).width(100), (100, 50), "no profile"),
    ("strip_color_profile (0 keeps it)", proxy.image("p3.jpg").strip_color_profile(False).width(100), (100, 50), "profile"),
    # A JPEG has no embedded thumbnail to use: the picture, as without the option.
    ("enforce_thumbnail", image.enforce_thumbnail(True).width(300), (300, 200), "same"),
    ("quality", image.quality(50).width(300), (300, 200), "smaller"),
    ("max_bytes (add_option: the library's method is not written)", image.add_option("max_bytes", 10000).width(300), (300, 200), "at most 10000 bytes"),
    ("format", image.format("webp").width(300), (300, 200), "webp"),
    ("page", image.page(0).width(300), (300, 200), "same"),
    ("cachebuster", image.cachebuster("v2").width(300), (300, 200), "same"),
    ("return_attachment", image.return_attachment(True).width(300), (300, 200), "attachment"),
    ("raw", image.raw(True), (2400, 1600), "the source's bytes"),
]
# Emitted by the library, refused by Aspect with a 400 naming the option: imgproxy Pro's
# options, and the security options (Aspect's limits are the operator's configuration).
refused = [
    ("resizing_algorithm", image.resizing_algorithm("lanczos2")),
    ("background_alpha", image.background_alpha(0.5)),
    ("brightness", image.brightness(10)),
    ("contrast", image.contrast(1.2)),
    ("saturation", image.saturation(1.2)),
    ("unsharp_masking", image.unsharp_masking("always", 1, 1)),
    ("blur_detections", image.blur_detections(2)),
    ("draw_detections", image.draw_detections(True)),
    ("max_src_resolution", image.max_src_resolution(50)),
    ("max_src_file_size", image.max_src_file_size(1000000)),
    ("max_animation_frames", image.max_animation_frames(10)),
    ("max_animation_frame_resolution", image.max_animation_frame_resolution(10)),
]

out = [{"name": n, "url": i.url, "size": list(s) if s else None, "effect": e} for n, i, s, e in supported]
out += [{"name": n, "url": i.url, "size": "refused"} for n, i in refused]
print(json.dumps(out))
