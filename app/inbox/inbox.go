package inbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/vision/imageio"
)

// Defaults of Options.
const (
	DefaultMaxItems = 500
	DefaultMaxBytes = 256 << 20
	DefaultMaxSide  = 256
)

// Names of an item's files in its folder.
const (
	sidecarName  = "item.json"
	imageName    = "image.jpg"
	featuresName = "features.f32"
)

// Errors of an Inbox.
var (
	// ErrNotFound: no item has the ID.
	ErrNotFound = errors.New("inbox: no such item")
	// ErrTooLarge: an item larger than the whole inbox's MaxBytes.
	ErrTooLarge = errors.New("inbox: item larger than the inbox")
	// ErrLocked: the folder's lock could not be taken.
	ErrLocked = errors.New("inbox: cannot lock the folder")
	// ErrClosed: the inbox was closed.
	ErrClosed = errors.New("inbox: closed")
)

// Options bound an Inbox. Zero fields take the defaults.
type Options struct {
	MaxItems int   `flag:"inbox-max-items"`
	MaxBytes int64 `flag:"inbox-max-bytes"`
	// MaxSide is the longest side of a stored image, in pixels (default
	// DefaultMaxSide; larger images are downscaled, smaller ones kept as
	// they are).
	MaxSide int
	// Quality is the JPEG quality of stored images (default 90).
	Quality int
	Logger  *slog.Logger // default: discard
	// Now gives the time of a new item (default time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxItems
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxSide <= 0 {
		o.MaxSide = DefaultMaxSide
	}
	if o.MaxSide > maxImageSide {
		return o, fmt.Errorf("inbox: MaxSide %d is more than %d", o.MaxSide, maxImageSide)
	}
	if o.Quality <= 0 {
		o.Quality = 90
	}
	if o.Quality > 100 {
		return o, fmt.Errorf("inbox: JPEG quality %d is more than 100", o.Quality)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Entry is an input to keep.
type Entry struct {
	ModelVersion uint64
	Guess        string
	Unknown      bool
	Probability  *float64
	Top          []Score
	Why          Reason
	// Image is the input image (nil for a feature vector); it is stored
	// downscaled to Options.MaxSide.
	Image *imageio.RGB
	// Features is the feature vector the model scored.
	Features []float32
	// Camera and Zone say where a frame of a video stream came from
	// (flycl watch); empty for a served prediction, or a whole frame.
	Camera, Zone string
}

// Inbox is a bounded folder of kept inputs. Its methods are safe for
// concurrent use, and several processes may open the same folder (flycl
// serve lists and learns what flycl watch keeps): every method holds the
// folder's lock (a file lock on DIR/.lock) while it runs, and first brings
// its index up to date with the items other processes added or removed.
type Inbox struct {
	dir   string
	opt   Options
	lock  *flock.Flock
	mu    sync.Mutex // held with the folder's lock
	items []Item     // oldest first (IDs ascending)
	bytes int64
	last  int64 // the largest ID given
	// skipped lists the folders Open did not take (corrupt sidecars).
	skipped map[string]bool
	closed  bool
}

// Open opens (creating) the inbox in dir and rebuilds its index from the
// folder. Another Inbox of the same folder, in this or another process,
// shares it: each method takes the folder's lock for its duration.
func Open(dir string, opt Options) (*Inbox, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	b := &Inbox{dir: dir, opt: opt, lock: flock.New(filepath.Join(dir, ".lock")), skipped: map[string]bool{}}
	// The bounds may be smaller than when the items were kept.
	if err := b.locked(func() error { return b.evict(0, 0) }); err != nil {
		return nil, err
	}
	return b, nil
}

// locked runs fn holding b.mu and the folder's lock, the index brought up
// to date with the folder first.
func (b *Inbox) locked(fn func() error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if err := b.lock.Lock(); err != nil {
		return fmt.Errorf("%w %s: %v", ErrLocked, b.lock.Path(), err)
	}
	defer b.lock.Unlock()
	if err := b.load(); err != nil {
		return err
	}
	return fn()
}

// Close closes the inbox; its methods then return ErrClosed.
func (b *Inbox) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

// Dir returns the inbox's folder.
func (b *Inbox) Dir() string { return b.dir }

// validID reports whether id is an item's name: 20 decimal digits of a
// number an int64 holds (the IDs add gives; a larger one would set the
// next ID past the largest, where IDs no longer grow).
func validID(id string) bool {
	if len(id) != 20 {
		return false
	}
	for _, c := range []byte(id) {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(id, 10, 64)
	return err == nil
}

// load brings the index up to date with the folder (the folder's lock
// held): every folder with a valid sidecar whose files agree with it is
// an item (verified once, when first seen); a folder without a sidecar is
// a write or removal a crash interrupted (writes and removals hold the
// lock), and is removed; an item whose folder has gone was removed by
// another process.
func (b *Inbox) load() error {
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	known := make(map[string]bool, len(b.items))
	for _, it := range b.items {
		known[it.ID] = true
	}
	on := make(map[string]bool, len(ents))
	added := false
	for _, e := range ents {
		if !e.IsDir() || !validID(e.Name()) {
			continue
		}
		id := e.Name()
		n, _ := strconv.ParseInt(id, 10, 64)
		b.last = max(b.last, n)
		on[id] = true
		if known[id] || b.skipped[id] {
			continue
		}
		it, err := b.verify(id)
		if errors.Is(err, fs.ErrNotExist) && !b.exists(id, sidecarName) {
			b.opt.Logger.Info("inbox: removing an item left incomplete by a crash", "dir", filepath.Join(b.dir, id))
			if err := os.RemoveAll(filepath.Join(b.dir, id)); err != nil {
				return fmt.Errorf("inbox: %w", err)
			}
			continue
		}
		if err != nil {
			b.opt.Logger.Warn("inbox: skipping an item", "err", err)
			b.skipped[id] = true
			continue
		}
		b.items = append(b.items, it)
		b.bytes += it.Bytes
		added = true
	}
	for id := range b.skipped {
		if !on[id] {
			delete(b.skipped, id)
		}
	}
	b.items = slices.DeleteFunc(b.items, func(it Item) bool {
		if on[it.ID] {
			return false
		}
		b.bytes -= it.Bytes
		return true
	})
	if added {
		slices.SortFunc(b.items, func(x, y Item) int { return compareIDs(x.ID, y.ID) })
	}
	return nil
}

func compareIDs(a, b string) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

func (b *Inbox) exists(id, name string) bool {
	_, err := os.Lstat(filepath.Join(b.dir, id, name))
	return err == nil
}

// verify reads an item's sidecar and checks its files against it.
func (b *Inbox) verify(id string) (Item, error) {
	path := filepath.Join(b.dir, id, sidecarName)
	f, err := os.Open(path)
	if err != nil {
		return Item{}, err
	}
	s, err := parseSidecar(f, id)
	f.Close()
	if err != nil {
		return Item{}, &SidecarError{Path: path, Err: err}
	}
	st, err := os.Stat(path)
	if err != nil {
		return Item{}, err
	}
	total := st.Size()
	check := func(name string, size int64, crc uint32) error {
		p := filepath.Join(b.dir, id, name)
		data, err := readFileLimit(p, size)
		if err != nil {
			return &SidecarError{Path: path, Err: fmt.Errorf("%s: %w", name, err)}
		}
		if c := crc32.Checksum(data, castagnoli); c != crc {
			return &SidecarError{Path: path, Err: fmt.Errorf("%s: CRC-32C %08x, the sidecar says %08x", name, c, crc)}
		}
		total += size
		return nil
	}
	if err := check(featuresName, s.FeaturesBytes, s.FeaturesCRC); err != nil {
		return Item{}, err
	}
	if s.Image {
		if err := check(imageName, s.ImageBytes, s.ImageCRC); err != nil {
			return Item{}, err
		}
	} else if b.exists(id, imageName) {
		return Item{}, &SidecarError{Path: path, Err: fmt.Errorf("%s present, the sidecar says no image", imageName)}
	}
	it := s.Item
	it.Bytes = total
	return it, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readFileLimit reads a file that must be exactly size bytes, without
// reading more than that.
func readFileLimit(path string, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() != size {
		return nil, fmt.Errorf("%d bytes, want %d", st.Size(), size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}

// Add keeps an entry, dropping the oldest items until it fits, and
// returns it and the IDs of the items it dropped.
func (b *Inbox) Add(e Entry) (Item, []string, error) {
	if len(e.Features) == 0 || len(e.Features) > maxDim {
		return Item{}, nil, fmt.Errorf("inbox: %d features (want 1 to %d)", len(e.Features), maxDim)
	}
	for i, v := range e.Features {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return Item{}, nil, fmt.Errorf("inbox: feature %d is not finite", i)
		}
	}
	s := sidecar{Format: sidecarFormat, Item: Item{ModelVersion: e.ModelVersion, Guess: e.Guess, Unknown: e.Unknown,
		Probability: e.Probability, Top: e.Top, Why: e.Why, Dim: len(e.Features), Camera: e.Camera, Zone: e.Zone}}
	if s.Top == nil {
		s.Top = []Score{}
	}
	feat := make([]byte, 4*len(e.Features))
	for i, v := range e.Features {
		binary.LittleEndian.PutUint32(feat[4*i:], math.Float32bits(v))
	}
	s.FeaturesBytes, s.FeaturesCRC = int64(len(feat)), crc32.Checksum(feat, castagnoli)
	var img []byte
	if e.Image != nil {
		if e.Image.W < 1 || e.Image.H < 1 || len(e.Image.Pix) != 3*e.Image.W*e.Image.H {
			return Item{}, nil, fmt.Errorf("inbox: malformed %d×%d image", e.Image.W, e.Image.H)
		}
		th := Thumbnail(e.Image, b.opt.MaxSide)
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, th, &jpeg.Options{Quality: b.opt.Quality}); err != nil {
			return Item{}, nil, fmt.Errorf("inbox: encode the image: %w", err)
		}
		img = buf.Bytes()
		s.Image, s.Width, s.Height = true, th.Rect.Dx(), th.Rect.Dy()
		s.ImageBytes, s.ImageCRC = int64(len(img)), crc32.Checksum(img, castagnoli)
	}
	var it Item
	var dropped []string
	err := b.locked(func() (err error) {
		it, dropped, err = b.add(&s, feat, img)
		return err
	})
	return it, dropped, err
}

// add writes an item (the lock held).
func (b *Inbox) add(s *sidecar, feat, img []byte) (Item, []string, error) {
	// The ID is the time, made larger than every ID given before.
	now := b.opt.Now()
	id := max(now.UnixNano(), b.last+1)
	b.last = id
	s.ID = fmt.Sprintf("%020d", id)
	s.Time = now.UTC()
	if err := s.check(s.ID); err != nil {
		return Item{}, nil, fmt.Errorf("inbox: %w", err)
	}
	js, err := json.Marshal(s)
	if err != nil {
		return Item{}, nil, fmt.Errorf("inbox: %w", err)
	}
	// Bytes counts the sidecar itself, which records it: its digits
	// settle in a few rounds.
	size := int64(len(feat)) + int64(len(img))
	for range 4 {
		s.Bytes = size + int64(len(js)+1)
		if js, err = json.Marshal(s); err != nil {
			return Item{}, nil, fmt.Errorf("inbox: %w", err)
		}
	}
	js = append(js, '\n')
	total := size + int64(len(js))
	if total > b.opt.MaxBytes {
		return Item{}, nil, fmt.Errorf("%w: %d bytes, the inbox holds %d", ErrTooLarge, total, b.opt.MaxBytes)
	}
	dropped := b.oldest(1, total)
	for _, d := range dropped {
		if err := b.remove(d); err != nil {
			return Item{}, nil, err
		}
	}
	dir := filepath.Join(b.dir, s.ID)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Item{}, dropped, fmt.Errorf("inbox: %w", err)
	}
	write := func(name string, data []byte) error {
		return atomicfile.WriteFile(filepath.Join(dir, name), func(w io.Writer) error { _, err := w.Write(data); return err })
	}
	// the sidecar last: the item exists once it does
	err = write(featuresName, feat)
	if err == nil && img != nil {
		err = write(imageName, img)
	}
	if err == nil {
		err = write(sidecarName, js)
	}
	if err != nil {
		os.RemoveAll(dir)
		return Item{}, dropped, fmt.Errorf("inbox: %w", err)
	}
	it := s.Item
	it.Bytes = total
	b.items = append(b.items, it)
	b.bytes += total
	return it, dropped, nil
}

// oldest returns the IDs of the oldest items to drop so that n more
// items of size more bytes fit.
func (b *Inbox) oldest(n int, size int64) []string {
	var ids []string
	count, bytes := len(b.items), b.bytes
	for _, it := range b.items {
		if count+n <= b.opt.MaxItems && bytes+size <= b.opt.MaxBytes {
			break
		}
		ids = append(ids, it.ID)
		count--
		bytes -= it.Bytes
	}
	return ids
}

// evict drops the oldest items until n more of size bytes fit.
func (b *Inbox) evict(n int, size int64) error {
	for _, id := range b.oldest(n, size) {
		if err := b.remove(id); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes an item (b.mu held): the sidecar first, so that a crash
// leaves a folder Open removes.
func (b *Inbox) remove(id string) error {
	i := slices.IndexFunc(b.items, func(it Item) bool { return it.ID == id })
	if i < 0 {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	dir := filepath.Join(b.dir, id)
	if err := os.Remove(filepath.Join(dir, sidecarName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("inbox: %w", err)
	}
	b.bytes -= b.items[i].Bytes
	b.items = slices.Delete(b.items, i, i+1)
	if err := os.RemoveAll(dir); err != nil {
		b.opt.Logger.Warn("inbox: could not remove the files of a removed item (Open removes them)", "dir", dir, "err", err)
	}
	return nil
}

// Remove removes the items with the given IDs. An ID that is not (or no
// longer) there is skipped; removed lists those removed.
func (b *Inbox) Remove(ids ...string) (removed []string, err error) {
	err = b.locked(func() error {
		for _, id := range ids {
			if err := b.remove(id); errors.Is(err, ErrNotFound) {
				continue
			} else if err != nil {
				return err
			}
			removed = append(removed, id)
		}
		return nil
	})
	return removed, err
}

// List returns the items, newest first (none when the folder cannot be
// read or locked: the error is logged).
func (b *Inbox) List() []Item {
	var out []Item
	if err := b.locked(func() error { out = slices.Clone(b.items); return nil }); err != nil && !errors.Is(err, ErrClosed) {
		b.opt.Logger.Warn("inbox: cannot list", "err", err)
	}
	slices.Reverse(out)
	return out
}

// Len returns the number of items and their bytes.
func (b *Inbox) Len() (items int, bytes int64) {
	b.locked(func() error { items, bytes = len(b.items), b.bytes; return nil })
	return items, bytes
}

// Get returns the item with the ID.
func (b *Inbox) Get(id string) (it Item, err error) {
	err = b.locked(func() (err error) { it, err = b.get(id); return err })
	return it, err
}

func (b *Inbox) get(id string) (Item, error) {
	if !validID(id) {
		return Item{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	i := slices.IndexFunc(b.items, func(it Item) bool { return it.ID == id })
	if i < 0 {
		return Item{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return b.items[i], nil
}

// Image returns an item's stored image (JPEG); ErrNotFound when the item
// is not there or has no image.
func (b *Inbox) Image(id string) (data []byte, err error) {
	err = b.locked(func() (err error) { data, err = b.image(id); return err })
	return data, err
}

func (b *Inbox) image(id string) ([]byte, error) {
	it, err := b.get(id)
	if err != nil {
		return nil, err
	}
	if !it.Image {
		return nil, fmt.Errorf("%w: %s has no image", ErrNotFound, id)
	}
	s, err := b.verifySidecar(id)
	if err != nil {
		return nil, err
	}
	return b.readChecked(id, imageName, s.ImageBytes, s.ImageCRC)
}

// Features returns an item's feature vector.
func (b *Inbox) Features(id string) (x []float32, err error) {
	err = b.locked(func() (err error) { x, err = b.features(id); return err })
	return x, err
}

func (b *Inbox) features(id string) ([]float32, error) {
	if _, err := b.get(id); err != nil {
		return nil, err
	}
	s, err := b.verifySidecar(id)
	if err != nil {
		return nil, err
	}
	data, err := b.readChecked(id, featuresName, s.FeaturesBytes, s.FeaturesCRC)
	if err != nil {
		return nil, err
	}
	x := make([]float32, s.Dim)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		if math.IsNaN(float64(x[i])) || math.IsInf(float64(x[i]), 0) {
			return nil, fmt.Errorf("inbox: %s: feature %d is not finite", filepath.Join(b.dir, id, featuresName), i)
		}
	}
	return x, nil
}

// verifySidecar reads an item's sidecar again (the folder may have been
// changed behind the inbox).
func (b *Inbox) verifySidecar(id string) (*sidecar, error) {
	path := filepath.Join(b.dir, id, sidecarName)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	defer f.Close()
	s, err := parseSidecar(f, id)
	if err != nil {
		return nil, &SidecarError{Path: path, Err: err}
	}
	return s, nil
}

func (b *Inbox) readChecked(id, name string, size int64, crc uint32) ([]byte, error) {
	p := filepath.Join(b.dir, id, name)
	data, err := readFileLimit(p, size)
	if err != nil {
		return nil, fmt.Errorf("inbox: %s: %w", p, err)
	}
	if c := crc32.Checksum(data, castagnoli); c != crc {
		return nil, fmt.Errorf("inbox: %s: CRC-32C %08x, the sidecar says %08x", p, c, crc)
	}
	return data, nil
}

// Thumbnail returns im scaled down so that its longest side is at most
// maxSide pixels (im itself, as RGBA, when it is already small enough):
// each output pixel is the mean of the source pixels it covers (a box
// filter, which does not alias as point sampling does).
func Thumbnail(im *imageio.RGB, maxSide int) *image.RGBA {
	w, h := im.W, im.H
	if long := max(w, h); long > maxSide {
		w = max(1, int(int64(im.W)*int64(maxSide)/int64(long)))
		h = max(1, int(int64(im.H)*int64(maxSide)/int64(long)))
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		y0, y1 := y*im.H/h, max((y+1)*im.H/h, y*im.H/h+1)
		for x := range w {
			x0, x1 := x*im.W/w, max((x+1)*im.W/w, x*im.W/w+1)
			var r, g, bl, n int
			for sy := y0; sy < y1; sy++ {
				row := im.Pix[3*(sy*im.W+x0) : 3*(sy*im.W+x1)]
				for i := 0; i < len(row); i += 3 {
					r += int(row[i])
					g += int(row[i+1])
					bl += int(row[i+2])
				}
				n += x1 - x0
			}
			o := out.PixOffset(x, y)
			out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = uint8((r+n/2)/n), uint8((g+n/2)/n), uint8((bl+n/2)/n), 255
		}
	}
	return out
}
