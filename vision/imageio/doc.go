// Package imageio decodes images into 8-bit RGB exactly as PIL's
// Image.open(...).convert("RGB") does, which is what torchvision and timm
// pipelines see: JPEG through libjpeg-turbo (the library PIL links), PNG,
// GIF, BMP and TIFF through Go's decoders (golang.org/x/image for BMP and
// TIFF) with PIL's mode conversions, and binary PGM/PPM. Like PIL, a
// Decoder refuses images with more pixels than a limit (PIL's by default),
// from their header, before decoding them; a Budget shared by decoders
// bounds the pixels they decode at once, admitted from the headers too.
// WebP is refused: golang.org/x/image/webp does not reproduce libwebp's
// lossy upsampling, so it would not match PIL.
package imageio
