package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/flycl/flycl/imageio"
)

// checkImages checks that the server has a backbone and every image's
// size from its header (each at most MaxPixels, all together at most
// MaxRequestPixels), and returns each image's pixels.
func (s *Server) checkImages(raw [][]byte) ([]int64, error) {
	if s.cfg.Extractor == nil {
		return nil, errorf(http.StatusBadRequest, "this server has no backbone (start it with --backbone): send feature vectors")
	}
	dec := imageio.Decoder{MaxPixels: int64(s.cfg.MaxPixels)}
	pixels := make([]int64, len(raw))
	var total int64
	for i, b := range raw {
		w, h, err := dec.Config(b)
		if errors.Is(err, imageio.ErrTooLarge) {
			return nil, errorf(http.StatusRequestEntityTooLarge, "image %d: %v", i, err)
		}
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "image %d: not a readable JPEG, PNG, GIF, BMP, TIFF or PGM/PPM image: %v", i, err)
		}
		pixels[i] = int64(w) * int64(h)
		total += pixels[i]
	}
	if total > s.cfg.MaxRequestPixels {
		return nil, errorf(http.StatusRequestEntityTooLarge, "the %d images have %d pixels in all; the limit per request is %d pixels", len(raw), total, s.cfg.MaxRequestPixels)
	}
	return pixels, nil
}

// calibrate calibrates the server's Calibrator on the images of a learn
// (on the learner goroutine) and gives the model its pipeline; a corrupt
// image is the request's error (400).
func (s *Server) calibrate(ctx context.Context, c Calibrator, raw [][]byte) error {
	setter, ok := s.cfg.Backend.(pipelineSetter)
	if !ok {
		return fmt.Errorf("server: the backend cannot take the calibrated pipeline: %w", ErrUnsupported)
	}
	dec := imageio.Decoder{MaxPixels: int64(s.cfg.MaxPixels)}
	// Every image must decode before any calibrates the backbone, which
	// may sample only some of them: a learn refused for a corrupt image
	// leaves the backbone uncalibrated.
	for i, b := range raw {
		if _, err := dec.Decode(b); err != nil {
			return errorf(http.StatusBadRequest, "image %d: corrupt image: %v", i, err)
		}
	}
	p, err := c.Calibrate(ctx, len(raw), func(i int) (*imageio.RGB, error) {
		im, err := dec.Decode(raw[i])
		if err != nil {
			return nil, &InputError{fmt.Errorf("image %d: corrupt image: %v", i, err)}
		}
		return im, nil
	})
	if err != nil {
		return fmt.Errorf("calibrate the int8 backbone on the learn's %d images: %w", len(raw), err)
	}
	if err := setter.SetPipeline(p); err != nil {
		return err
	}
	s.log.Info("calibrated the int8 backbone", "images", len(raw), "backbone", c.Name())
	return nil
}

// extractBatch is how many decoded images go to the extractor at once.
const extractBatch = 16

// imageFeatures checks every image's size from its header (each at most
// MaxPixels, all together at most MaxRequestPixels), then, holding one of
// the Extractions slots, decodes and extracts the images a batch at a
// time: at most Extractions batches of decoded pixels exist at once,
// whatever the number of requests.
func (s *Server) imageFeatures(ctx context.Context, raw [][]byte) ([]float32, time.Duration, error) {
	pixels, err := s.checkImages(raw)
	if err != nil {
		return nil, 0, err
	}
	if _, ok := s.calibrating(); ok {
		// nothing learned yet (learns of images calibrate first)
		return nil, 0, ErrNotTrained
	}
	dec := imageio.Decoder{MaxPixels: int64(s.cfg.MaxPixels)}
	select {
	case s.extract <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	defer func() { <-s.extract }()
	t := time.Now()
	x := make([]float32, 0, len(raw)*s.cfg.Extractor.Dim())
	for lo := 0; lo < len(raw); {
		// A batch of up to extractBatch images and about MaxPixels pixels.
		var batch []*imageio.RGB
		var px int64
		for lo < len(raw) && len(batch) < extractBatch && (len(batch) == 0 || px+pixels[lo] <= int64(s.cfg.MaxPixels)) {
			im, err := dec.Decode(raw[lo])
			if err != nil {
				return nil, 0, errorf(http.StatusBadRequest, "image %d: corrupt image: %v", lo, err)
			}
			batch = append(batch, im)
			px += pixels[lo]
			lo++
		}
		f, err := s.cfg.Extractor.Features(ctx, batch)
		if err != nil {
			return nil, 0, err
		}
		x = append(x, f...)
	}
	s.met.extracted.Add(float64(len(raw)))
	return x, time.Since(t), nil
}
