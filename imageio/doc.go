// Package imageio decodes images into 8-bit RGB exactly as PIL's
// Image.open(...).convert("RGB") does, which is what torchvision and timm
// pipelines see: JPEG through libjpeg-turbo (the library PIL links), PNG,
// GIF and BMP through Go's decoders with PIL's mode conversions.
package imageio
