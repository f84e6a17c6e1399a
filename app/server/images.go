package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/flycl/flycl/vision/imageio"
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

// calibrate calibrates the server's extractor on the images of a learn
// (on the learner goroutine) and gives the model its pipeline; a corrupt
// image is the request's error (400).
func (s *Server) calibrate(ctx context.Context, c calibrator, raw [][]byte) error {
	setter, ok := s.cfg.Backend.(pipelineSetter)
	if !ok {
		return fmt.Errorf("server: the backend cannot take the calibrated pipeline: %w", ErrUnsupported)
	}
	dec := s.decoder()
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
	s.log.Info("calibrated the int8 backbone", "images", len(raw), "backbone", s.cfg.Extractor.Name())
	return nil
}

// ExtractBatch is how many decoded images go to the extractor at once: the
// batch size to compile a served extractor for (extract.Extractor.BatchSize).
const ExtractBatch = 16

// decoder returns the server's decoder: its pixel limit, and its
// decoding budget held while each image decodes.
func (s *Server) decoder() imageio.Decoder {
	return imageio.Decoder{MaxPixels: int64(s.cfg.MaxPixels), Budget: s.pixels}
}

// imageFeatures checks every image's size from its header (each at most
// MaxPixels, all together at most MaxRequestPixels), then decodes and
// extracts the images a batch at a time. Each batch first takes its
// pixels (from the headers) of the server's decoding budget, waiting at
// most DecodeWait (then 503), and then one of the Extractions slots, and
// holds both until its features are out: the decoded pixels of all
// requests together stay within DecodePixels, and a request that waits
// for pixels holds no slot, so a small image is extracted while large
// ones wait.
func (s *Server) imageFeatures(ctx context.Context, raw [][]byte) ([]float32, time.Duration, error) {
	pixels, err := s.checkImages(raw)
	if err != nil {
		return nil, 0, err
	}
	if _, ok := s.calibrating(); ok {
		// nothing learned yet (learns of images calibrate first)
		return nil, 0, ErrNotTrained
	}
	// no Budget in the decoder: batchFeatures holds each batch's pixels
	// for as long as its images live
	dec := imageio.Decoder{MaxPixels: int64(s.cfg.MaxPixels)}
	t := time.Now()
	x := make([]float32, 0, len(raw)*s.cfg.Extractor.Dim())
	for lo := 0; lo < len(raw); {
		// A batch of up to ExtractBatch images and about MaxPixels pixels.
		hi, px := lo+1, pixels[lo]
		for hi < len(raw) && hi-lo < ExtractBatch && px+pixels[hi] <= int64(s.cfg.MaxPixels) {
			px += pixels[hi]
			hi++
		}
		f, err := s.batchFeatures(ctx, dec, raw, lo, hi, px)
		if err != nil {
			return nil, 0, err
		}
		x = append(x, f...)
		lo = hi
	}
	s.met.extracted.Add(float64(len(raw)))
	return x, time.Since(t), nil
}

// batchFeatures decodes and extracts images lo..hi of raw, of px pixels
// in all, holding px pixels of the decoding budget and an extraction
// slot.
func (s *Server) batchFeatures(ctx context.Context, dec imageio.Decoder, raw [][]byte, lo, hi int, px int64) ([]float32, error) {
	wctx, cancel := context.WithTimeoutCause(ctx, s.cfg.DecodeWait, fmt.Errorf("waited %v", s.cfg.DecodeWait))
	err := s.pixels.Acquire(wctx, px)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("images %d..%d: %w; retry later", lo, hi-1, err)
	}
	// the images are unreachable once decodeExtract returns
	defer s.pixels.Release(px)
	return s.decodeExtract(ctx, dec, raw[lo:hi], lo)
}

// decodeExtract decodes raw (images lo.. of the request) and extracts
// them, holding an extraction slot.
func (s *Server) decodeExtract(ctx context.Context, dec imageio.Decoder, raw [][]byte, lo int) ([]float32, error) {
	select {
	case s.extract <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.extract }()
	batch := make([]*imageio.RGB, 0, len(raw))
	for i, b := range raw {
		im, err := dec.Decode(b)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "image %d: corrupt image: %v", lo+i, err)
		}
		batch = append(batch, im)
	}
	return s.cfg.Extractor.Features(ctx, batch)
}
