package locate

// ortArch is the npm package onnxruntime-node's name of this build's
// architecture (its folder bin/napi-v6/linux/ARCH).
const ortArch = "arm64"
