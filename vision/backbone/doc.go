// Package backbone runs frozen feature extractors on ONNX Runtime. Models
// are built as ONNX graphs in Go directly from checkpoint tensors
// (SqueezeNet 1.1 and MobileNetV2 from per-layer .npy files, ResNet-50 and
// ViT-B/16 from their released checkpoints) or loaded from any .onnx file.
package backbone
