#!/usr/bin/python3
# Reference outputs of SqueezeNet 1.1 and MobileNetV2 1.0 from an
# independent PyTorch implementation (torch.nn.functional on the same .npy
# weights), on 4 photos of ../../../shared/data/imagenet-sample-500,
# preprocessed by PIL + torchvision (256 bilinear, crop 224, ImageNet
# statistics). Written once with Debian's python3-torch 1.13 and committed:
#   /usr/bin/python3 gen_cnn.py
import glob, os
import numpy as np
import torch
import torch.nn.functional as F
import torchvision.transforms as T
from PIL import Image

shared = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared")
files = sorted(glob.glob(f"{shared}/data/imagenet-sample-500/*.JPEG"))[:8:2]
tf = T.Compose([T.Resize(256, interpolation=T.InterpolationMode.BILINEAR), T.CenterCrop(224), T.ToTensor(),
                T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
x = torch.stack([tf(Image.open(f).convert("RGB")) for f in files])

def load(d):
    return {os.path.basename(p)[:-4]: torch.from_numpy(np.load(p)) for p in glob.glob(f"{d}/*.npy")}

with torch.no_grad():
    w = load(f"{shared}/models/squeezenet1.1")
    c = lambda x, i, s=1, p=0: F.relu(F.conv2d(x, w[f"squeezenet0_conv{i}_weight"], w[f"squeezenet0_conv{i}_bias"], s, p))
    fire = lambda x, i: torch.cat([c(c(x, i), i + 1), c(c(x, i), i + 2, 1, 1)], 1)
    y = F.max_pool2d(c(x, 0, 2), 3, 2, ceil_mode=True)
    y = fire(fire(y, 1), 4)
    y = F.max_pool2d(y, 3, 2, ceil_mode=True)
    y = fire(fire(y, 7), 10)
    y = F.max_pool2d(y, 3, 2, ceil_mode=True)
    for i in (13, 16, 19, 22):
        y = fire(y, i)
    sq_feat = y.mean((2, 3))
    sq_logits = c(y, 25).mean((2, 3))

    w = load(f"{shared}/models/mobilenetv2-1.0")
    def conv(x, i, s, act):
        wt = w[f"conv_{i}_weight"]
        g = x.shape[1] // wt.shape[1]
        y = F.conv2d(x, wt, w[f"conv_{i}_bias"], s, (wt.shape[-1] - 1) // 2, groups=g)
        return torch.clamp(y, 0, 6) if act else y
    y = conv(conv(conv(x, 0, 2, True), 2, 1, True), 4, 1, False)
    for first, s in [(5, 2), (10, 1), (16, 2), (21, 1), (27, 1), (33, 2), (38, 1), (44, 1), (50, 1), (56, 1), (61, 1), (67, 1), (73, 2), (78, 1), (84, 1), (90, 1)]:
        h = conv(conv(conv(y, first, 1, True), first + 2, s, True), first + 4, 1, False)
        y = y + h if s == 1 and h.shape[1] == y.shape[1] else h
    mb_feat = conv(y, 95, 1, True).mean((2, 3))

np.savez("cnn_reference.npz", files=np.array([os.path.basename(f) for f in files]),
         squeezenet_features=sq_feat.numpy(), squeezenet_logits=sq_logits.numpy(), mobilenetv2_features=mb_feat.numpy())
print(sq_logits.argmax(1), [os.path.basename(f) for f in files])
