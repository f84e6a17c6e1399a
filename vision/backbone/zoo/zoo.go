package zoo

import (
	"embed"
	"io/fs"
)

// Folder names of the backbones in FS (the names a models folder uses).
const (
	MobileNetV2 = "mobilenetv2-1.0" // 1280-d feature, no classifier
	SqueezeNet  = "squeezenet1.1"   // 512-d feature and the 1000 ImageNet logits
)

//go:embed mobilenetv2-1.0/*.npy squeezenet1.1/*.npy LICENSE NOTICE
var files embed.FS

// FS returns the shipped weights, read-only: the folders MobileNetV2 and
// SqueezeNet of per-layer .npy files, and LICENSE and NOTICE (the Apache
// License 2.0 and the attribution that must travel with the weights).
func FS() fs.FS { return files }
