package watch

import "github.com/flycl/flycl/vision/transform"

// ShortSideFor is FFmpeg.ShortSide for a model whose transform is p: the
// side the transform resizes a frame's shorter side to (its crop when it
// does not resize), so that ffmpeg hands over frames no larger than the
// model looks at; 0 (the source's own size) for a transform that does
// neither. Zones are cropped from the source's own pixels: a command
// with zones leaves ShortSide 0.
func ShortSideFor(p transform.Preset) int {
	if p.Resize > 0 {
		return p.Resize
	}
	return max(p.Crop, 0)
}
