#!/usr/bin/python3
# Fixtures for packages imageio and transform, written once with Debian's
# python3-pil (Pillow 9.4, libjpeg-turbo 2.1.5) and python3-torchvision
# (0.14) and committed: /usr/bin/python3 gen.py
#
# Source images are synthetic (smooth colour fields, sharp coloured edges
# and noise, which is where chroma subsampling and filters differ). For each
# we store what PIL decodes (Image.open(f).convert("RGB")) and what
# torchvision's Resize + CenterCrop give, as uint8 .npy arrays, and one
# full ToTensor + Normalize output as float32.
import numpy as np
from PIL import Image

rng = np.random.default_rng(7)

def synth(w, h):
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 128 + 100 * np.sin(x / 7.0) * np.cos(y / 11.0)
    g = 255 * (x / max(w - 1, 1))
    b = 255 * ((x + y) % 17 < 8)
    img = np.stack([r, g, b], -1) + rng.normal(0, 12, (h, w, 3))
    img[h // 3: h // 2, w // 4: w // 2] = [250, 10, 30]  # a sharp red block
    return np.clip(img, 0, 255).astype(np.uint8)

def save_npy(name, arr):
    np.save(name, np.ascontiguousarray(arr))

sources = []
for (w, h, sub, prog) in [(67, 45, 0, False), (40, 61, 1, False), (83, 52, 2, False), (64, 64, 2, True), (33, 19, 2, False)]:
    name = f"rgb_{w}x{h}_s{sub}{'_prog' if prog else ''}.jpg"
    Image.fromarray(synth(w, h)).save(name, quality=90, subsampling=sub, progressive=prog)
    sources.append(name)
g = Image.fromarray(synth(50, 30)).convert("L"); g.save("gray_50x30.jpg", quality=85); sources.append("gray_50x30.jpg")
c = Image.fromarray(synth(30, 20)).convert("CMYK"); c.save("cmyk_30x20.jpg", quality=90); sources.append("cmyk_30x20.jpg")
base = Image.fromarray(synth(37, 23))
base.save("rgb_37x23.png"); sources.append("rgb_37x23.png")
rgba = base.convert("RGBA"); a = np.array(rgba); a[..., 3] = np.arange(37)[None, :] * 6; Image.fromarray(a).save("rgba_37x23.png"); sources.append("rgba_37x23.png")
base.convert("L").save("gray_37x23.png"); sources.append("gray_37x23.png")
base.quantize(colors=32).save("pal_37x23.png"); sources.append("pal_37x23.png")
base.quantize(colors=16).save("pal_37x23.gif"); sources.append("pal_37x23.gif")
base.save("rgb_37x23.bmp"); sources.append("rgb_37x23.bmp")

for s in sources:
    save_npy(s + ".rgb.npy", np.array(Image.open(s).convert("RGB")))

# Resizes with PIL (what torchvision calls on PIL images), down and up.
for s in ["rgb_83x52_s2.jpg", "rgb_40x61_s1.jpg", "rgb_33x19_s2.jpg"]:
    im = Image.open(s).convert("RGB")
    for filt, fname in [(Image.BILINEAR, "bilinear"), (Image.BICUBIC, "bicubic")]:
        for (w, h) in [(29, 17), (100, 71), (83, 20), (12, 52)]:
            save_npy(f"{s}.{fname}_{w}x{h}.npy", np.array(im.resize((w, h), filt)))

# torchvision transforms: Resize(shorter side) + CenterCrop, and a full tensor.
try:
    import torch
    import torchvision.transforms as T
    from torchvision.transforms import InterpolationMode as IM
    im = Image.open("rgb_83x52_s2.jpg").convert("RGB")
    for size, crop, mode, fname in [(24, 20, IM.BICUBIC, "bicubic"), (40, 33, IM.BILINEAR, "bilinear"), (70, 64, IM.BICUBIC, "bicubic")]:
        out = T.Compose([T.Resize(size, interpolation=mode), T.CenterCrop(crop)])(im)
        save_npy(f"tv_resize{size}_{fname}_crop{crop}.npy", np.array(out))
    t = T.Compose([T.Resize(40, interpolation=IM.BICUBIC), T.CenterCrop(33), T.ToTensor(),
                   T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])(im)
    save_npy("tv_tensor_resize40_bicubic_crop33_imagenet.npy", t.numpy().astype(np.float32))
except ImportError:
    print("torchvision not available: skipped its fixtures")
