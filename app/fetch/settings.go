package fetch

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Setting is one of the paper's settings: the data set and backbone it
// needs from the catalogue and the flycl-lab run arguments that reproduce it.
// docs/REPRODUCE.md shows Command for every setting (a test checks it).
type Setting struct {
	Name     string // e.g. "cifar100-vit"
	Title    string
	Data     string   // catalogue name of the data set
	Backbone string   // catalogue name of the weights
	Args     []string // flycl-lab run arguments after --data and --backbone
	Tasks    int      // the --tasks value (for the estimate)
	Seeds    int      // how many seeds (for the estimate)
	// Paper is the paper's figure for Fly-CL (empty if it reports none).
	Paper string
}

const (
	seedsCIFAR = "1993,1994,1995,1996,1997"
	seedsCUB   = "2023,2024,2025,2026,2027"
	lambdasR50 = "1e4,1e5,1e6,1e7,1e8,1e9" // the paper's λ range for ResNet-50
)

func runArgs(preset string, tasks int, seeds string, extra ...string) []string {
	a := []string{"--preset", preset, "--tasks", fmt.Sprint(tasks)}
	if seeds != "" {
		a = append(a, "--order", "flycl", "--seeds", seeds)
	}
	return append(a, extra...)
}

var settings = []Setting{
	{Name: "cifar100-vit", Title: "ViT-B/16, CIFAR-100, 10 tasks (the paper's main table)", Data: "cifar100", Backbone: "vit",
		Args: runArgs("flycl-cifar", 10, seedsCIFAR, "--methods", "all"), Tasks: 10, Seeds: 5, Paper: "Ā = 93.89"},
	{Name: "cub-vit", Title: "ViT-B/16, CUB-200-2011, 10 tasks", Data: "cub", Backbone: "vit",
		Args: runArgs("flycl", 10, seedsCUB, "--methods", "all"), Tasks: 10, Seeds: 5, Paper: "Ā = 93.84"},
	{Name: "vtab-vit", Title: "ViT-B/16, VTAB (50 classes), 5 tasks", Data: "vtab", Backbone: "vit",
		Args: runArgs("flycl", 5, seedsCUB, "--methods", "all"), Tasks: 5, Seeds: 5, Paper: "Ā = 96.54"},
	{Name: "imagenet-r-vit", Title: "ViT-B/16, ImageNet-R, 10 tasks", Data: "imagenet-r", Backbone: "vit",
		Args: runArgs("flycl", 10, seedsCIFAR, "--methods", "all"), Tasks: 10, Seeds: 5, Paper: "Ā = 83.19"},
	{Name: "imagenet-a-vit", Title: "ViT-B/16, ImageNet-A, 10 tasks", Data: "imagenet-a", Backbone: "vit",
		Args: runArgs("flycl", 10, seedsCIFAR, "--methods", "all"), Tasks: 10, Seeds: 5, Paper: "Ā = 67.98"},
	{Name: "cifar100-resnet50", Title: "ResNet-50, CIFAR-100, 10 tasks", Data: "cifar100", Backbone: "resnet50-v2",
		Args: runArgs("flycl-cifar-in", 10, seedsCIFAR, "--lambdas", lambdasR50), Tasks: 10, Seeds: 5, Paper: "Ā = 84.61"},
	{Name: "cub-resnet50", Title: "ResNet-50, CUB-200-2011, 10 tasks", Data: "cub", Backbone: "resnet50-v2",
		Args: runArgs("flycl-in", 10, seedsCUB, "--lambdas", lambdasR50), Tasks: 10, Seeds: 5, Paper: "Ā = 80.25"},
	{Name: "vtab-resnet50", Title: "ResNet-50, VTAB (50 classes), 5 tasks", Data: "vtab", Backbone: "resnet50-v2",
		Args: runArgs("flycl-in", 5, seedsCUB, "--lambdas", lambdasR50), Tasks: 5, Seeds: 5, Paper: "Ā = 94.00"},
	{Name: "cifar100-vit-20", Title: "ViT-B/16, CIFAR-100, 20 tasks of 5 classes", Data: "cifar100", Backbone: "vit",
		Args: runArgs("flycl-cifar", 20, ""), Tasks: 20, Seeds: 1},
	{Name: "cub-vit-20", Title: "ViT-B/16, CUB-200-2011, 20 tasks of 10 classes", Data: "cub", Backbone: "vit",
		Args: runArgs("flycl", 20, ""), Tasks: 20, Seeds: 1},
	{Name: "vtab-vit-10", Title: "ViT-B/16, VTAB, 10 tasks of 5 classes", Data: "vtab", Backbone: "vit",
		Args: runArgs("flycl", 10, ""), Tasks: 10, Seeds: 1},
}

// Settings returns every setting (a copy).
func Settings() []Setting {
	out := make([]Setting, len(settings))
	for i, s := range settings {
		s.Args = append([]string(nil), s.Args...)
		out[i] = s
	}
	return out
}

// LookupSetting returns the setting called name; the error wraps
// ErrUnknown.
func LookupSetting(name string) (Setting, error) {
	var names []string
	for _, s := range Settings() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return Setting{}, fmt.Errorf("%w setting %q (want one of %s)", ErrUnknown, name, strings.Join(names, ", "))
}

// Assets returns the setting's backbone and data set.
func (s Setting) Assets() (backbone, data Asset, err error) {
	if backbone, err = Lookup(s.Backbone); err != nil {
		return
	}
	data, err = Lookup(s.Data)
	return
}

// Out is the setting's output folder.
func (s Setting) Out() string { return "out/" + s.Name }

// Command is the flycl command line of the setting (without the program
// name) with the weights in weightsDir and the data in dataDir.
func (s Setting) Command(weightsDir, dataDir string) ([]string, error) {
	b, d, err := s.Assets()
	if err != nil {
		return nil, err
	}
	args := []string{"run", "--data", d.Flag(dataDir), "--backbone", b.Flag(weightsDir)}
	args = append(args, s.Args...)
	return append(args, "--out", s.Out()), nil
}

// Measured is a throughput measured for the docs, which the estimate of a
// setting's time uses.
type Measured struct {
	// ImagesPerSecond of feature extraction, by catalogue backbone name.
	ImagesPerSecond map[string]float64
	// PostPerTask is Fly-CL's learning time per task (τ_post), by
	// "data/backbone" catalogue names (pairs not measured are absent).
	PostPerTask map[string]time.Duration
	// Images is the number of images (train and test) by data set.
	Images map[string]int
	// Machine and Commands say where and how the figures were measured.
	Machine, Commands string
}

// DocsMeasured are the figures of docs/REPRODUCE.md and the README, measured
// on the project's 2-core machine.
var DocsMeasured = Measured{
	ImagesPerSecond: map[string]float64{"vit": 6.6, "vit-augreg-in21k": 6.6, "resnet50-v2": 39.7, "resnet50-v1": 39.7},
	PostPerTask:     map[string]time.Duration{"cifar100/vit": 8700 * time.Millisecond, "cub/vit": 2500 * time.Millisecond},
	Images:          map[string]int{"cifar100": 60000, "cifar10": 60000, "cub": 11788, "imagenet-r": 30000, "imagenet-a": 7500},
	Machine:         "2-core AMD EPYC, OpenBLAS 0.3.21, OPENBLAS_CORETYPE unset, 2026-11-26",
	Commands:        "make bench-backbones (fp32 extraction, batch 8, 2 threads) and make bench-engine (τ_post)",
}

// Estimate is the expected time of a setting on the measured machine.
type Estimate struct {
	Images  int           // 0: not known
	Extract time.Duration // extraction of every image once (0: not known)
	// Post is Fly-CL's learning over every task and seed (0: not
	// measured for this data set and backbone). Other methods are not
	// included.
	Post time.Duration
}

// Estimate returns the expected time of s from m; images, if positive,
// overrides m's count for the data set (e.g. a split's recorded count).
func (m Measured) Estimate(s Setting, images int) Estimate {
	var e Estimate
	e.Images = images
	if e.Images <= 0 {
		e.Images = m.Images[s.Data]
	}
	if r := m.ImagesPerSecond[s.Backbone]; r > 0 && e.Images > 0 {
		e.Extract = time.Duration(float64(e.Images) / r * float64(time.Second)).Round(time.Second)
	}
	if p := m.PostPerTask[s.Data+"/"+s.Backbone]; p > 0 {
		e.Post = p * time.Duration(s.Tasks*s.Seeds)
	}
	return e
}
