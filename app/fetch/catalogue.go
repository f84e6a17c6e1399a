package fetch

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Kind says what an asset is, and so the folder it goes to by default.
type Kind string

// The kinds of asset.
const (
	Weights Kind = "weights"
	Data    Kind = "data"
)

// Asset is one file of the catalogue.
type Asset struct {
	Name string // catalogue name, e.g. "resnet50-v2"
	File string // file name in the destination folder
	Kind Kind
	// URLs are the official locations, tried in order.
	URLs []string
	// Size is the published size in bytes, checked against what the server
	// announces before the body is read (0: none published).
	Size int64
	// ApproxSize is a size for display and the free-space check when none
	// is published (0: unknown).
	ApproxSize int64
	// Digest is the published digest; the zero Digest means trust on first
	// use (the lock file records the first download's SHA-256, once
	// CheckFirstUse accepts the file's size and type).
	Digest Digest
	// Type is the file's type, checked by its first bytes before it is
	// trusted on first use (AnyType: the one its name says, TypeOf).
	Type FileType
	// DigestSource says where the digest (or the file) is published.
	DigestSource string
	// Spec is the kind of the flycl flag that reads the asset: "resnet50"
	// or "vit" for --backbone, "cifar100", "cub" or "folder" for --data
	// ("" for the full ImageNet-R/A releases, which have no train/test
	// split).
	Spec string
	// Split, when set, names the folder the archive is converted into
	// (NAME/train/<class>/, NAME/test/<class>/), beside the archive.
	Split string
	// About describes the asset in a line.
	About string
}

// TrustOnFirstUse reports whether the asset has no published digest.
func (a Asset) TrustOnFirstUse() bool { return a.Digest.IsZero() }

// ExpectedSize is the published size, else the approximate one (0 if
// neither is known).
func (a Asset) ExpectedSize() int64 {
	if a.Size > 0 {
		return a.Size
	}
	return a.ApproxSize
}

// Path is where the asset's file is in dir; for a split archive, the
// converted folder.
func (a Asset) Path(dir string) string {
	if a.Split != "" {
		return filepath.Join(dir, a.Split)
	}
	return filepath.Join(dir, a.File)
}

// Flag is the value of flycl's --backbone or --data that reads the asset
// in dir, e.g. "resnet50:weights/resnet50-11ad3fa6.pth" ("" for an asset
// no flag reads as it is).
func (a Asset) Flag(dir string) string {
	if a.Spec == "" {
		return ""
	}
	return a.Spec + ":" + a.Path(dir)
}

const (
	gdrive          = "https://drive.usercontent.google.com/download?export=download&confirm=t&id="
	splitDigestNote = "MD5 published by the RevisitingCIL (ADAM) authors, whose archives PILOT and RanPAC use: github.com/zhoudw-zdw/RevisitingCIL issue 5"
)

// catalogue is every asset flycl-lab fetch knows. Digests marked published come
// from the publisher (torchvision's file names embed the first 8 hex digits
// of the SHA-256; the CIFAR page lists MD5s) or from public records of the
// same files; the two ViT-B/16 weight files have none and are trusted on
// first use.
var catalogue = []Asset{
	{
		Name: "resnet50-v1", File: "resnet50-0676ba61.pth", Kind: Weights, Spec: "resnet50",
		URLs: []string{"https://download.pytorch.org/models/resnet50-0676ba61.pth"},
		Size: 102530333, Digest: Digest{"sha256", "0676ba61b6795bbe1773cffd859882e5e297624d384b6993f7c9e683e722fb8a"},
		DigestSource: "torchvision ResNet50_Weights.IMAGENET1K_V1 (the file name carries the SHA-256 prefix torchvision checks)",
		About:        "ResNet-50, torchvision IMAGENET1K_V1 (BSD-3-Clause)",
	},
	{
		Name: "resnet50-v2", File: "resnet50-11ad3fa6.pth", Kind: Weights, Spec: "resnet50",
		URLs: []string{"https://download.pytorch.org/models/resnet50-11ad3fa6.pth"},
		Size: 102540417, Digest: Digest{"sha256", "11ad3fa62ca79e40addfd354a8ec4b7c75143b3038b8d2a807fbc68deab379ca"},
		DigestSource: "torchvision ResNet50_Weights.IMAGENET1K_V2 (the file name carries the SHA-256 prefix torchvision checks)",
		About:        "ResNet-50, torchvision IMAGENET1K_V2, the paper's ResNet-50 (BSD-3-Clause)",
	},
	{
		Name: "vit", File: "vit_base_patch16_224.augreg2_in21k_ft_in1k.safetensors", Kind: Weights, Spec: "vit",
		URLs:       []string{"https://huggingface.co/timm/vit_base_patch16_224.augreg2_in21k_ft_in1k/resolve/main/model.safetensors"},
		ApproxSize: 346e6, Type: Safetensors,
		DigestSource: "timm's Hugging Face repository timm/vit_base_patch16_224.augreg2_in21k_ft_in1k (model.safetensors); no digest published: trust on first use",
		About:        "ViT-B/16, timm vit_base_patch16_224.augreg2_in21k_ft_in1k, what the official Fly-CL code loads (Apache-2.0)",
	},
	{
		Name: "vit-augreg-in21k", File: "B_16-i21k-300ep-lr_0.001-aug_medium1-wd_0.1-do_0.0-sd_0.0.npz", Kind: Weights, Spec: "vit",
		URLs:       []string{"https://storage.googleapis.com/vit_models/augreg/B_16-i21k-300ep-lr_0.001-aug_medium1-wd_0.1-do_0.0-sd_0.0.npz"},
		ApproxSize: 412e6, Type: Zip, // an .npz
		DigestSource: "Google's vision_transformer release (gs://vit_models/augreg); no digest published: trust on first use",
		About:        "ViT-B/16, Google augreg ImageNet-21k checkpoint (Apache-2.0)",
	},
	{
		Name: "cifar100", File: "cifar-100-python.tar.gz", Kind: Data, Spec: "cifar100",
		URLs:       []string{"https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"},
		ApproxSize: 169e6, Digest: Digest{"md5", "eb9058c3a382ffc7106e4002c42a8d85"},
		DigestSource: "the CIFAR authors' page, www.cs.toronto.edu/~kriz/cifar.html",
		About:        "CIFAR-100, python version",
	},
	{
		Name: "cifar10", File: "cifar-10-python.tar.gz", Kind: Data, Spec: "cifar10",
		URLs:       []string{"https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"},
		ApproxSize: 170e6, Digest: Digest{"md5", "c58f30108f718f92721af3b95e74349a"},
		DigestSource: "the CIFAR authors' page, www.cs.toronto.edu/~kriz/cifar.html",
		About:        "CIFAR-10, python version",
	},
	{
		Name: "cub", File: "CUB_200_2011.tgz", Kind: Data, Spec: "cub",
		URLs: []string{"https://data.caltech.edu/records/65de6-vp158/files/CUB_200_2011.tgz?download=1"},
		Size: 1150585339, Digest: Digest{"sha256", "0c685df5597a8b24909f6a7c9db6d11e008733779a671760afef78feb49bf081"},
		DigestSource: "CaltechDATA record 65de6-vp158 (public records of the same file)",
		About:        "CUB-200-2011, the official release (train/test by train_test_split.txt)",
	},
	{
		Name: "imagenet-r-tar", File: "imagenet-r.tar", Kind: Data,
		URLs: []string{"https://people.eecs.berkeley.edu/~hendrycks/imagenet-r.tar"},
		Size: 2191079936, Digest: Digest{"sha256", "18c6bf493b39a0d975d48e587437f562caab9c52ae6327dcfa9dd8eb54aa1b52"},
		DigestSource: "the ImageNet-R authors' release (public records of the same file)",
		About:        "ImageNet-R, the authors' full release (no train/test split; not a setting's input)",
	},
	{
		Name: "imagenet-a-tar", File: "imagenet-a.tar", Kind: Data,
		URLs: []string{"https://people.eecs.berkeley.edu/~hendrycks/imagenet-a.tar"},
		Size: 687552512, Digest: Digest{"sha256", "3bb3632277e6ba6392ea64c02ddbf4dd2266c9caffd6bc09c9656d28f012589e"},
		DigestSource: "the ImageNet-A authors' release (public records of the same file)",
		About:        "ImageNet-A, the authors' full release (no train/test split; not a setting's input)",
	},
	{
		Name: "imagenet-r", File: "imagenet-r.zip", Kind: Data, Spec: "folder", Split: "imagenet-r",
		URLs:       []string{gdrive + "1SG4TbiL8_DooekztyCVK8mPmfhMo8fkR"},
		ApproxSize: 2.2e9, Digest: Digest{"md5", "730aa3fb9c7d2ec0b6381c6b23040681"},
		DigestSource: splitDigestNote,
		About:        "ImageNet-R in the PILOT/RanPAC train/test split (200 classes)",
	},
	{
		Name: "imagenet-a", File: "ina.zip", Kind: Data, Spec: "folder", Split: "imagenet-a",
		URLs:       []string{gdrive + "19l52ua_vvTtttgVRziCZJjal0TPE9f2p"},
		ApproxSize: 690e6, Digest: Digest{"md5", "7f4aaf0b1532b7a0bd670822c152d3c5"},
		DigestSource: splitDigestNote,
		About:        "ImageNet-A in the PILOT/RanPAC train/test split (200 classes)",
	},
	{
		Name: "vtab", File: "vtab.zip", Kind: Data, Spec: "folder", Split: "vtab",
		URLs:   []string{gdrive + "1xUiwlnx4k0oDhYi26KL5KwrCAya-mvJ_"},
		Digest: Digest{"md5", "a9c37bde6105a2516c900b0c33a437c1"}, DigestSource: splitDigestNote,
		About: "VTAB, the 50-class class-incremental version of PILOT/RanPAC (5 data sets × 10 classes)",
	},
}

// Catalogue returns every asset (a copy: callers may change it).
func Catalogue() []Asset {
	out := make([]Asset, len(catalogue))
	for i, a := range catalogue {
		a.URLs = append([]string(nil), a.URLs...)
		out[i] = a
	}
	return out
}

// Names lists the catalogue's names, sorted.
func Names() []string {
	var n []string
	for _, a := range catalogue {
		n = append(n, a.Name)
	}
	sort.Strings(n)
	return n
}

// Lookup returns the asset called name; the error wraps ErrUnknown.
func Lookup(name string) (Asset, error) {
	for _, a := range Catalogue() {
		if a.Name == name {
			return a, nil
		}
	}
	return Asset{}, fmt.Errorf("%w %q (want one of %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}
