#!/usr/bin/python3
# Fixtures for the 16-bit greyscale and TIFF decoding of package imageio,
# written once with Debian's python3-pil (Pillow 9.4) and committed:
# /usr/bin/python3 gen_formats.py
#
# For each source we store what PIL gives for Image.open(f).convert("RGB")
# as a uint8 .npy array, as gen.py does.
import numpy as np
from PIL import Image

rng = np.random.default_rng(11)

def synth(w, h):
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 128 + 100 * np.sin(x / 5.0) * np.cos(y / 7.0)
    g = 255 * (x / max(w - 1, 1))
    b = 255 * ((x + y) % 13 < 6)
    img = np.stack([r, g, b], -1) + rng.normal(0, 12, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)

sources = []
# 16-bit greyscale PNG: values over the whole 0..65535 range, including
# the small ones (<= 255) that PIL passes through and the large ones it clips
g16 = np.concatenate([np.arange(0, 300, dtype=np.uint16),
                      rng.integers(0, 65536, 31 * 29 - 300, dtype=np.uint16)]).reshape(29, 31)
Image.fromarray(g16).save("gray16_31x29.png"); sources.append("gray16_31x29.png")
base = Image.fromarray(synth(35, 21))
base.save("rgb_35x21.tif"); sources.append("rgb_35x21.tif")
base.save("rgb_35x21_lzw.tif", compression="tiff_lzw"); sources.append("rgb_35x21_lzw.tif")
base.save("rgb_35x21_deflate.tif", compression="tiff_adobe_deflate"); sources.append("rgb_35x21_deflate.tif")
base.convert("L").save("gray_35x21.tif"); sources.append("gray_35x21.tif")
base.quantize(colors=24).save("pal_35x21.tif"); sources.append("pal_35x21.tif")
rgba = np.array(base.convert("RGBA")); rgba[..., 3] = (np.arange(35)[None, :] * 7).astype(np.uint8)
Image.fromarray(rgba).save("rgba_35x21.tif"); sources.append("rgba_35x21.tif")
Image.fromarray(g16).save("gray16_31x29.tif"); sources.append("gray16_31x29.tif")
base.save("rgb_35x21.webp", lossless=True)  # refused: no PIL-exact WebP decoder

for s in sources:
    im = Image.open(s)
    print(s, im.mode, im.size)
    np.save(s + ".rgb.npy", np.ascontiguousarray(np.array(im.convert("RGB"))))

# binary PGM/PPM (maxval 255), as PIL writes them
a = synth(17, 13)
Image.fromarray(a).save("rgb_17x13.ppm")
Image.fromarray(a).convert("L").save("gray_17x13.pgm")
for s in ["rgb_17x13.ppm", "gray_17x13.pgm"]:
    np.save(s + ".rgb.npy", np.ascontiguousarray(np.array(Image.open(s).convert("RGB"))))
