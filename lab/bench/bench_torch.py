#!/usr/bin/python3
# (Built into flycl with go:embed and fed to python on stdin.)
# PyTorch side of "flycl-lab bench backbones": images/s of the same four
# architectures with random weights, eval mode, no_grad, float32, batch and
# threads as given. Prints one JSON object. Needs Debian's python3-torch
# and python3-torchvision (a benchmark tool only, never a run-time need).
import json, sys, time
import torch, torchvision

batch, threads, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
torch.set_num_threads(threads)
models = {
    "squeezenet1.1": torchvision.models.squeezenet1_1(),
    "mobilenetv2-1.0": torchvision.models.mobilenet_v2(),
    "resnet50": torchvision.models.resnet50(),
    "vit": torchvision.models.vit_b_16(),
}
out = {"torch": torch.__version__, "threads": torch.get_num_threads()}
x = torch.randn(batch, 3, 224, 224)
with torch.no_grad():
    for name, m in models.items():
        m.eval()
        m(x)
        n, start = 0, time.time()
        while time.time() - start < seconds:
            m(x)
            n += batch
        out[name] = n / (time.time() - start)
print(json.dumps(out))
