package fetch

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/vision/dataset"
)

func TestCatalogue(t *testing.T) {
	names, files := map[string]bool{}, map[string]bool{}
	var tofu []string
	for _, a := range Catalogue() {
		if names[a.Name] || files[a.File] {
			t.Errorf("%s: name or file %s twice", a.Name, a.File)
		}
		names[a.Name], files[a.File] = true, true
		if err := checkName(a.File); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
		if len(a.URLs) == 0 {
			t.Errorf("%s: no URL", a.Name)
		}
		for _, u := range a.URLs {
			if p, err := url.Parse(u); err != nil || p.Scheme != "https" || p.Host == "" {
				t.Errorf("%s: URL %q is not https", a.Name, u)
			}
		}
		switch a.Digest.Algo {
		case "sha256", "md5":
			n := map[string]int{"sha256": 64, "md5": 32}[a.Digest.Algo]
			if !isHex(a.Digest.Hex, n) {
				t.Errorf("%s: %s digest %q is not %d hex digits", a.Name, a.Digest.Algo, a.Digest.Hex, n)
			}
		case "":
			tofu = append(tofu, a.Name)
		default:
			t.Errorf("%s: digest algorithm %q", a.Name, a.Digest.Algo)
		}
		if a.DigestSource == "" || a.About == "" {
			t.Errorf("%s: no digest source or description", a.Name)
		}
		switch a.Kind {
		case Weights:
			ext := path.Ext(a.File)
			if a.Spec != "resnet50" && a.Spec != "vit" || !slices.Contains([]string{".pth", ".safetensors", ".npz"}, ext) {
				t.Errorf("%s: --backbone %s with a %s file", a.Name, a.Spec, ext)
			}
		case Data:
			if a.Spec == "" && strings.Contains(a.About, "not a setting's input") {
				break
			}
			if _, err := dataset.ParseSpec(a.Flag("data")); err != nil {
				t.Errorf("%s: %v", a.Name, err)
			}
			if a.Split != "" && (a.Spec != "folder" || path.Ext(a.File) != ".zip") {
				t.Errorf("%s: a split must be a zip read as folder:", a.Name)
			}
		default:
			t.Errorf("%s: kind %q", a.Name, a.Kind)
		}
	}
	// Only the two ViT-B/16 weight files have no published digest.
	if slices.Sort(tofu); !slices.Equal(tofu, []string{"vit", "vit-augreg-in21k"}) {
		t.Errorf("trusted on first use: %v", tofu)
	}
	if _, err := Lookup("nope"); !errors.Is(err, ErrUnknown) {
		t.Errorf("Lookup(nope): %v", err)
	}
}

// torchvision names its files NAME-<first 8 hex digits of the SHA-256>.pth
// and checks that prefix on download: the digests must agree with it.
func TestTorchvisionDigestsMatchFileNames(t *testing.T) {
	for _, n := range []string{"resnet50-v1", "resnet50-v2"} {
		a, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		prefix := strings.TrimSuffix(strings.TrimPrefix(a.File, "resnet50-"), ".pth")
		if !strings.HasPrefix(a.Digest.Hex, prefix) || !strings.HasSuffix(a.URLs[0], "/"+a.File) {
			t.Errorf("%s: digest %s, file %s, URL %s", n, a.Digest.Hex, a.File, a.URLs[0])
		}
	}
}

func TestSettings(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Settings() {
		if seen[s.Name] {
			t.Errorf("%s twice", s.Name)
		}
		seen[s.Name] = true
		b, d, err := s.Assets()
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if b.Kind != Weights || d.Kind != Data {
			t.Errorf("%s: backbone %s is %s, data %s is %s", s.Name, b.Name, b.Kind, d.Name, d.Kind)
		}
		cmd, err := s.Command("w", "d")
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Join(cmd, " ")
		seeds := 1
		if i := slices.Index(cmd, "--seeds"); i >= 0 {
			seeds = strings.Count(cmd[i+1], ",") + 1
		}
		if !strings.Contains(line, fmt.Sprintf("--tasks %d ", s.Tasks)) || seeds != s.Seeds {
			t.Errorf("%s: %q does not run %d tasks × %d seeds", s.Name, line, s.Tasks, s.Seeds)
		}
		if !strings.HasPrefix(line, "run --data "+d.Flag("d")+" --backbone "+b.Flag("w")+" ") || !strings.HasSuffix(line, " --out out/"+s.Name) {
			t.Errorf("%s: %q", s.Name, line)
		}
	}
	if _, err := LookupSetting("nope"); !errors.Is(err, ErrUnknown) {
		t.Errorf("LookupSetting(nope): %v", err)
	}
}

func TestEstimate(t *testing.T) {
	m := Measured{
		ImagesPerSecond: map[string]float64{"vit": 10},
		PostPerTask:     map[string]time.Duration{"cifar100/vit": 2 * time.Second},
		Images:          map[string]int{"cifar100": 1000},
	}
	s, _ := LookupSetting("cifar100-vit") // 10 tasks × 5 seeds
	e := m.Estimate(s, 0)
	if e.Images != 1000 || e.Extract != 100*time.Second || e.Post != 100*time.Second {
		t.Errorf("estimate %+v: want 1000 images, 100 s extraction, 50 × 2 s learning", e)
	}
	if e := m.Estimate(s, 500); e.Extract != 50*time.Second {
		t.Errorf("with 500 images: %+v", e)
	}
	r, _ := LookupSetting("cub-resnet50")
	if e := m.Estimate(r, 0); e != (Estimate{}) {
		t.Errorf("nothing measured for %s, estimate %+v", r.Name, e)
	}
}
