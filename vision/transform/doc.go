// Package transform implements the image preprocessing of PIL, torchvision
// and timm exactly: shorter-side resizing with PIL's antialiased bilinear
// and bicubic filters (a port of Pillow's resample.c, including its
// fixed-point arithmetic), centre cropping with torchvision's offsets, and
// normalisation to a float32 CHW tensor.
package transform
