package openset

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/image/draw"
)

// VideoFramesConfig says how WriteVideoFrames turns still photos into the
// video benchmark's frames.
type VideoFramesConfig struct {
	// Photos is the folder of photos, one per ImageNet class, named
	// <wnid>_<name>.JPEG (../shared/data/imagenet-sample-500).
	Photos string
	// Scenes are the photos (file names in Photos) that play the cameras'
	// empty scenes; they are no object of the benchmark.
	Scenes []string
	// Frames is the number of frames of each object's track (default 5).
	Frames int
	// Empty is the number of frames of each empty scene (default 40).
	Empty int
	// Size is the side of a square frame in pixels (default 256).
	Size int
	// Seed seeds the augmentations (default 1).
	Seed uint64
}

func (c VideoFramesConfig) withDefaults() VideoFramesConfig {
	if c.Frames == 0 {
		c.Frames = 5
	}
	if c.Empty == 0 {
		c.Empty = 40
	}
	if c.Size == 0 {
		c.Size = 256
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// DefaultVideoScenes are the ImageNet sample's photos the video benchmark
// uses as cameras' scenes: a patio and a picket fence, the kind of view a
// garden or a front-door camera has.
var DefaultVideoScenes = []string{"n03899768_patio.JPEG", "n03930313_picket_fence.JPEG"}

// View names of the video benchmark's frames: ViewCrop is an object
// cropped as a detector crops it (Frigate's snapshot crop: the object
// fills the frame); a scene's view is the object in that camera's scene
// (a zone of the frame that holds the object and the scene around it).
const ViewCrop = "crop"

// emptyClassPrefix starts the class folder of a scene's empty frames.
const emptyClassPrefix = "empty-"

// WriteVideoFrames writes the video benchmark's frames as JPEG files under
// out, in the layout flycl extract reads as one set (out/<class>/<file>):
// for every photo of c.Photos that is not a scene, c.Frames frames in each
// view (ViewCrop, and the object pasted into each scene),
// out/<wnid>/<view>@<photo>@<k>.jpg; and c.Empty frames of each empty
// scene, out/empty-<scene>/empty-<scene>@<scene>@<k>.jpg. Each frame is another random
// crop of the photo (55-100% of its area, aspect 3:4 to 4:3), mirrored or
// not, in another light (brightness and contrast ±15%); in a scene the
// object covers 50-85% of the frame's side at a random place, and the
// scene itself moves a little (a crop of 85-100% of its area) and changes
// light (±10%), as a camera's view does over a day. Everything is drawn
// from c.Seed and the file's name: the same config writes the same
// bytes. It returns the number of files written.
func WriteVideoFrames(ctx context.Context, c VideoFramesConfig, out string) (int, error) {
	c = c.withDefaults()
	if c.Frames < 1 || c.Empty < 1 || c.Size < 32 {
		return 0, fmt.Errorf("openset: video frames: want at least 1 frame per object and empty scene and a side of 32 pixels, have %d, %d, %d", c.Frames, c.Empty, c.Size)
	}
	entries, err := os.ReadDir(c.Photos)
	if err != nil {
		return 0, fmt.Errorf("openset: video frames: %w", err)
	}
	var photos []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(strings.ToLower(e.Name()), ".jpeg") {
			photos = append(photos, e.Name())
		}
	}
	slices.Sort(photos)
	scenes := make([]image.Image, len(c.Scenes))
	for i, s := range c.Scenes {
		if !slices.Contains(photos, s) {
			return 0, fmt.Errorf("openset: video frames: scene %s is not a photo of %s", s, c.Photos)
		}
		if scenes[i], err = readJPEG(filepath.Join(c.Photos, s)); err != nil {
			return 0, err
		}
	}
	written := 0
	write := func(dir, name string, img image.Image) error {
		if err := os.MkdirAll(filepath.Join(out, dir), 0o755); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(out, dir, name))
		if err != nil {
			return err
		}
		if err := jpeg.Encode(f, img, &jpeg.Options{Quality: 90}); err != nil {
			f.Close()
			return fmt.Errorf("openset: video frames: %s: %w", name, err)
		}
		written++
		return f.Close()
	}
	for i, s := range c.Scenes {
		stem := photoStem(s)
		for k := 0; k < c.Empty; k++ {
			r := frameRand(c.Seed, "empty", stem, k)
			if err := write(emptyClassPrefix+stem, emptyClassPrefix+stem+"@"+stem+"@"+strconv.Itoa(k)+".jpg", sceneFrame(scenes[i], c.Size, r)); err != nil {
				return written, err
			}
		}
	}
	for _, p := range photos {
		if slices.Contains(c.Scenes, p) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return written, err
		}
		img, err := readJPEG(filepath.Join(c.Photos, p))
		if err != nil {
			return written, err
		}
		stem := photoStem(p)
		wnid, _, _ := strings.Cut(stem, "_")
		for k := 0; k < c.Frames; k++ {
			r := frameRand(c.Seed, ViewCrop, stem, k)
			obj := objectCrop(img, r)
			if err := write(wnid, ViewCrop+"@"+stem+"@"+strconv.Itoa(k)+".jpg", resizeTo(obj, c.Size, c.Size)); err != nil {
				return written, err
			}
			for i, s := range c.Scenes {
				view := photoStem(s)
				r := frameRand(c.Seed, view, stem, k)
				bg := sceneFrame(scenes[i], c.Size, r)
				side := int(float64(c.Size) * (0.5 + 0.35*r.Float64()))
				ow, oh := obj.Bounds().Dx(), obj.Bounds().Dy()
				w, h := side, side
				if ow > oh {
					h = max(1, side*oh/ow)
				} else {
					w = max(1, side*ow/oh)
				}
				x, y := r.IntN(c.Size-w+1), r.IntN(c.Size-h+1)
				draw.CatmullRom.Scale(bg, image.Rect(x, y, x+w, y+h), obj, obj.Bounds(), draw.Src, nil)
				if err := write(wnid, view+"@"+stem+"@"+strconv.Itoa(k)+".jpg", bg); err != nil {
					return written, err
				}
			}
		}
	}
	return written, nil
}

// VideoFrameName splits a frame's path as WriteVideoFrames writes it
// (<dir>/<view>@<photo>@<k>.jpg) into its view (ViewCrop, a scene's
// stem, or "empty-<scene>" for an empty scene's frame), its photo's stem
// (the scene's for an empty frame) and its index in the track.
func VideoFrameName(path string) (view, photo string, k int, err error) {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	p := strings.Split(base, "@")
	if len(p) != 3 || p[0] == "" || p[1] == "" {
		return "", "", 0, fmt.Errorf("openset: video frame %q: want <view>@<photo>@<k>", path)
	}
	if k, err = strconv.Atoi(p[2]); err != nil || k < 0 {
		return "", "", 0, fmt.Errorf("openset: video frame %q: bad frame index %q", path, p[2])
	}
	return p[0], p[1], k, nil
}

func photoStem(name string) string { return strings.TrimSuffix(name, filepath.Ext(name)) }

// frameRand is the random source of one frame: the same seed, view,
// photo and index give the same draws.
func frameRand(seed uint64, view, photo string, k int) *rand.Rand {
	h := uint64(14695981039346656037)
	for _, b := range []byte(view + "/" + photo + "/" + strconv.Itoa(k)) {
		h = (h ^ uint64(b)) * 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}

func readJPEG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("openset: video frames: %w", err)
	}
	defer f.Close()
	img, err := jpeg.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("openset: video frames: %s: %w", path, err)
	}
	return img, nil
}

// objectCrop returns a random crop of img (55-100% of its area, aspect
// 3:4 to 4:3), mirrored half of the time, with its brightness and
// contrast changed by up to 15%.
func objectCrop(img image.Image, r *rand.Rand) *image.RGBA {
	b := img.Bounds()
	area := 0.55 + 0.45*r.Float64()
	aspect := math.Exp((r.Float64()*2 - 1) * math.Log(4.0/3))
	w := min(b.Dx(), max(1, int(math.Sqrt(area*float64(b.Dx()*b.Dy())*aspect))))
	h := min(b.Dy(), max(1, int(math.Sqrt(area*float64(b.Dx()*b.Dy())/aspect))))
	x, y := b.Min.X+r.IntN(b.Dx()-w+1), b.Min.Y+r.IntN(b.Dy()-h+1)
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(out, out.Bounds(), img, image.Pt(x, y), draw.Src)
	if r.IntN(2) == 1 {
		mirror(out)
	}
	light(out, 1+0.3*(r.Float64()-0.5), 1+0.3*(r.Float64()-0.5))
	return out
}

// sceneFrame returns the scene seen by a camera at one moment: a crop of
// 85-100% of its area resized to size×size, its light changed by up to
// 10%.
func sceneFrame(scene image.Image, size int, r *rand.Rand) *image.RGBA {
	b := scene.Bounds()
	f := math.Sqrt(0.85 + 0.15*r.Float64())
	w, h := max(1, int(f*float64(b.Dx()))), max(1, int(f*float64(b.Dy())))
	x, y := b.Min.X+r.IntN(b.Dx()-w+1), b.Min.Y+r.IntN(b.Dy()-h+1)
	out := image.NewRGBA(image.Rect(0, 0, size, size))
	draw.CatmullRom.Scale(out, out.Bounds(), scene, image.Rect(x, y, x+w, y+h), draw.Src, nil)
	light(out, 1+0.2*(r.Float64()-0.5), 1)
	return out
}

func resizeTo(img image.Image, w, h int) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(out, out.Bounds(), img, img.Bounds(), draw.Src, nil)
	return out
}

func mirror(img *image.RGBA) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for l, r := b.Min.X, b.Max.X-1; l < r; l, r = l+1, r-1 {
			a, c := img.RGBAAt(l, y), img.RGBAAt(r, y)
			img.SetRGBA(l, y, c)
			img.SetRGBA(r, y, a)
		}
	}
}

// light scales the pixels' brightness by bright and their contrast about
// mid-grey by contrast.
func light(img *image.RGBA, bright, contrast float64) {
	clamp := func(v float64) uint8 { return uint8(min(255, max(0, math.Round(v)))) }
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := img.RGBAAt(x, y)
			f := func(v uint8) uint8 { return clamp(((float64(v)-128)*contrast + 128) * bright) }
			img.SetRGBA(x, y, color.RGBA{f(p.R), f(p.G), f(p.B), 255})
		}
	}
}
