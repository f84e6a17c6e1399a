#!/usr/bin/python3
# Tiny random-weight ResNet (torchvision's Bottleneck blocks, torchvision's
# state-dict names) and ViT (timm's VisionTransformer structure and names)
# saved in the real checkpoint formats, with reference outputs from PyTorch.
# Written once with Debian's python3-torch 1.13 / python3-torchvision 0.14
# and committed: /usr/bin/python3 gen_tiny.py
#
# Inputs are not stored: both sides compute
#   x[n,c,h,w] = sin(0.1 (h+1)(c+1)) cos(0.07 (w+1)) + 0.1 n
import json, struct
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models.resnet import Bottleneck

torch.manual_seed(0)

def inputs(n, size):
    c, h, w = np.meshgrid(np.arange(3), np.arange(size), np.arange(size), indexing="ij")
    base = np.sin(0.1 * (h + 1) * (c + 1)) * np.cos(0.07 * (w + 1))
    return torch.from_numpy(np.stack([base + 0.1 * i for i in range(n)]).astype(np.float32))

def save_safetensors(sd, path):
    header, blobs, off = {}, [], 0
    for k, v in sd.items():
        b = v.detach().contiguous().numpy().astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b); off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h))); f.write(h)
        for b in blobs: f.write(b)

class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        def ds(i, o, s):
            return nn.Sequential(nn.Conv2d(i, o, 1, s, bias=False), nn.BatchNorm2d(o))
        self.layer1 = nn.Sequential(Bottleneck(8, 4, 1, ds(8, 16, 1)))
        self.layer2 = nn.Sequential(Bottleneck(16, 8, 2, ds(16, 32, 2)), Bottleneck(32, 8))
        self.layer3 = nn.Sequential(Bottleneck(32, 16, 2, ds(32, 64, 2)))
        self.layer4 = nn.Sequential(Bottleneck(64, 32, 2, ds(64, 128, 2)))
        self.fc = nn.Linear(128, 5)
    def forward(self, x):  # torchvision ResNet._forward_impl
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        f = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return f, self.fc(f)

r = TinyResNet()
for m in r.modules():  # non-trivial batch-norm statistics, so folding is tested
    if isinstance(m, nn.BatchNorm2d):
        m.running_mean.uniform_(-0.5, 0.5); m.running_var.uniform_(0.5, 2.0)
        m.weight.data.uniform_(0.5, 1.5); m.bias.data.uniform_(-0.2, 0.2)
r.eval()
with torch.no_grad():
    rf, rl = r(inputs(2, 224))
torch.save(r.state_dict(), "tiny_resnet.pth")
torch.save(r.state_dict(), "tiny_resnet_legacy.pth", _use_new_zipfile_serialization=False)
save_safetensors({k: v for k, v in r.state_dict().items() if v.dtype == torch.float32}, "tiny_resnet.safetensors")

class TinyViT(nn.Module):  # timm VisionTransformer, class token, no fc_norm
    def __init__(s, dim=24, depth=2, heads=3, patch=16, img=32, mlp=48, classes=7):
        super().__init__()
        s.heads = heads
        s.patch_embed = nn.Module(); s.patch_embed.proj = nn.Conv2d(3, dim, patch, patch)
        s.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        s.pos_embed = nn.Parameter(torch.randn(1, (img // patch) ** 2 + 1, dim) * 0.5)
        s.blocks = nn.ModuleList()
        for _ in range(depth):
            b = nn.Module()
            b.norm1 = nn.LayerNorm(dim, eps=1e-6); b.norm2 = nn.LayerNorm(dim, eps=1e-6)
            b.attn = nn.Module(); b.attn.qkv = nn.Linear(dim, 3 * dim); b.attn.proj = nn.Linear(dim, dim)
            b.mlp = nn.Module(); b.mlp.fc1 = nn.Linear(dim, mlp); b.mlp.fc2 = nn.Linear(mlp, dim)
            s.blocks.append(b)
        s.norm = nn.LayerNorm(dim, eps=1e-6)
        s.head = nn.Linear(dim, classes)
        for p in s.parameters():  # LayerNorm affine parameters away from 1/0
            p.data += 0.1 * torch.randn_like(p)
    def forward(s, x):
        x = s.patch_embed.proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([s.cls_token.expand(x.shape[0], -1, -1), x], 1) + s.pos_embed
        cls = []
        for b in s.blocks:
            B, N, C = x.shape
            qkv = b.attn.qkv(b.norm1(x)).reshape(B, N, 3, s.heads, C // s.heads).permute(2, 0, 3, 1, 4)
            q, k, v = qkv.unbind(0)
            a = ((q * (C // s.heads) ** -0.5) @ k.transpose(-2, -1)).softmax(-1)
            x = x + b.attn.proj((a @ v).transpose(1, 2).reshape(B, N, C))
            x = x + b.mlp.fc2(F.gelu(b.mlp.fc1(b.norm2(x))))
            cls.append(x[:, 0])
        f = s.norm(x)[:, 0]
        return f, s.head(f), s.norm(torch.stack(cls).mean(0))

v = TinyViT().eval()
with torch.no_grad():
    vf, vl, vb = v(inputs(3, 32))
save_safetensors(v.state_dict(), "tiny_vit.safetensors")
torch.save(v.state_dict(), "tiny_vit.pth")
np.savez("tiny_reference.npz", resnet_features=rf.numpy(), resnet_logits=rl.numpy(),
         vit_features=vf.numpy(), vit_logits=vl.numpy(), vit_blocks=vb.numpy())

# The same ViT as a Google augreg .npz (names and layouts that timm's
# _load_weights converts from): dense kernels [in, out], conv HWIO,
# attention kernels [D, heads, hd] and [heads, hd, D].
sd = {k: t.detach().numpy() for k, t in v.state_dict().items()}
D, H = 24, 3
a = {"embedding/kernel": sd["patch_embed.proj.weight"].transpose(2, 3, 1, 0), "embedding/bias": sd["patch_embed.proj.bias"],
     "cls": sd["cls_token"], "Transformer/posembed_input/pos_embedding": sd["pos_embed"],
     "Transformer/encoder_norm/scale": sd["norm.weight"], "Transformer/encoder_norm/bias": sd["norm.bias"],
     "head/kernel": sd["head.weight"].T, "head/bias": sd["head.bias"]}
for i in range(2):
    p, t = f"Transformer/encoderblock_{i}/", f"blocks.{i}."
    a[p + "LayerNorm_0/scale"], a[p + "LayerNorm_0/bias"] = sd[t + "norm1.weight"], sd[t + "norm1.bias"]
    a[p + "LayerNorm_2/scale"], a[p + "LayerNorm_2/bias"] = sd[t + "norm2.weight"], sd[t + "norm2.bias"]
    a[p + "MlpBlock_3/Dense_0/kernel"], a[p + "MlpBlock_3/Dense_0/bias"] = sd[t + "mlp.fc1.weight"].T, sd[t + "mlp.fc1.bias"]
    a[p + "MlpBlock_3/Dense_1/kernel"], a[p + "MlpBlock_3/Dense_1/bias"] = sd[t + "mlp.fc2.weight"].T, sd[t + "mlp.fc2.bias"]
    qw, qb = sd[t + "attn.qkv.weight"], sd[t + "attn.qkv.bias"]
    for j, n in enumerate(["query", "key", "value"]):
        a[p + f"MultiHeadDotProductAttention_1/{n}/kernel"] = qw[j * D:(j + 1) * D].T.reshape(D, H, D // H)
        a[p + f"MultiHeadDotProductAttention_1/{n}/bias"] = qb[j * D:(j + 1) * D].reshape(H, D // H)
    a[p + "MultiHeadDotProductAttention_1/out/kernel"] = sd[t + "attn.proj.weight"].T.reshape(H, D // H, D)
    a[p + "MultiHeadDotProductAttention_1/out/bias"] = sd[t + "attn.proj.bias"]
np.savez("tiny_vit_augreg.npz", **a)
