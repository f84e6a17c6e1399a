package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flycl/flycl/vision/imageio"
)

// Stream is an open source of frames.
type Stream interface {
	// Next reads the next frame into dst (reusing its pixels when large
	// enough; dst may be nil) and returns it; io.EOF at the end.
	Next(dst *imageio.RGB) (*imageio.RGB, error)
	// Close releases the stream; it unblocks a Next in progress.
	Close() error
}

// Source opens frame streams.
type Source interface {
	// Open starts a stream of frames.
	Open(ctx context.Context) (Stream, error)
	// Live reports whether the source is a live one (a camera or a
	// network stream): Run reconnects when its stream ends, and drops
	// stale frames instead of holding the source back. A file is not
	// live: Run ends at its end and classifies every frame.
	Live() bool
	// String names the source in logs and events.
	String() string
}

// FFmpeg is a Source that runs ffmpeg as a subprocess and reads the
// frames it writes to a pipe as binary PPM (raw 8-bit RGB behind a short
// header that carries the frame's size).
type FFmpeg struct {
	// Path is the ffmpeg executable ("": "ffmpeg" on the PATH).
	Path string
	// Input is what ffmpeg opens: a file, a URL (rtsp://, http://, ...,
	// MJPEG over HTTP included) or a V4L2 device (/dev/videoN).
	Input string
	// FPS samples the stream at this many frames per second (0: every
	// frame ffmpeg decodes).
	FPS float64
	// ShortSide scales every frame so that its shorter side has this many
	// pixels, keeping the aspect ratio (0: the source's size). Set it to
	// the model transform's resize so that frames cross the pipe no
	// larger than the transform needs.
	ShortSide int
	// MaxPixels bounds a frame's width × height (0: DefaultMaxPixels).
	MaxPixels int
	// InputArgs are extra ffmpeg options placed before -i (for example
	// "-rtsp_transport", "tcp").
	InputArgs []string
}

// networkSchemes are the URL schemes of live network sources.
var networkSchemes = []string{"rtsp://", "rtsps://", "rtmp://", "rtmps://", "http://", "https://", "udp://", "tcp://", "srt://", "rtp://"}

// Live reports whether the input is a network stream or a device.
func (f *FFmpeg) Live() bool {
	if strings.HasPrefix(f.Input, "/dev/") {
		return true
	}
	low := strings.ToLower(f.Input)
	for _, s := range networkSchemes {
		if strings.HasPrefix(low, s) {
			return true
		}
	}
	return false
}

func (f *FFmpeg) String() string { return f.Input }

// Args returns ffmpeg's command-line arguments (without the program). A
// still image (a file that starts as a JPEG, PNG, BMP, TIFF or PNM does)
// is read without the fps filter: the filter gives no frame for a single
// image, which has no duration, where the image is one frame.
func (f *FFmpeg) Args() []string {
	a := []string{"-hide_banner", "-nostdin", "-loglevel", "error"}
	if strings.HasPrefix(f.Input, "/dev/video") {
		a = append(a, "-f", "v4l2")
	}
	a = append(a, f.InputArgs...)
	a = append(a, "-i", f.Input, "-an", "-sn", "-dn")
	var vf []string
	if f.FPS > 0 && (f.Live() || !stillImage(f.Input)) {
		vf = append(vf, "fps="+strconv.FormatFloat(f.FPS, 'g', -1, 64))
	}
	if s := f.ShortSide; s > 0 {
		// the shorter side becomes s, the other keeps the aspect ratio
		// (rounded to an even number of pixels)
		vf = append(vf, fmt.Sprintf("scale=w='if(lt(iw,ih),%d,-2)':h='if(lt(iw,ih),-2,%d)'", s, s))
	}
	if len(vf) > 0 {
		a = append(a, "-vf", strings.Join(vf, ","))
	}
	return append(a, "-f", "image2pipe", "-c:v", "ppm", "-pix_fmt", "rgb24", "-")
}

// stillImage reports whether the file at path starts as a still image
// (JPEG, PNG, BMP, TIFF or binary PNM); false when it cannot be read.
func stillImage(path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	b := make([]byte, 8)
	n, _ := io.ReadFull(fh, b)
	b = b[:n]
	switch {
	case len(b) >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff,
		len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n",
		len(b) >= 2 && string(b[:2]) == "BM",
		len(b) >= 4 && (string(b[:4]) == "II*\x00" || string(b[:4]) == "MM\x00*"),
		len(b) >= 3 && b[0] == 'P' && b[1] >= '4' && b[1] <= '6' && (b[2] == '\n' || b[2] == ' ' || b[2] == '\r' || b[2] == '\t'):
		return true
	}
	return false
}

// Open starts ffmpeg. Its stream ends with io.EOF when ffmpeg exits with
// status 0, or with an *ExitError carrying the end of ffmpeg's error
// output. Cancelling ctx (or Close) stops ffmpeg.
func (f *FFmpeg) Open(ctx context.Context) (Stream, error) {
	if f.Input == "" {
		return nil, fmt.Errorf("watch: no input for ffmpeg")
	}
	path := f.Path
	if path == "" {
		path = "ffmpeg"
	}
	cmd := exec.CommandContext(ctx, path, f.Args()...)
	// ffmpeg finishes cleanly on SIGTERM; a process that does not exit
	// within WaitDelay is killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	tail := &tailBuffer{max: 4 << 10}
	cmd.Stderr = tail
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("watch: ffmpeg: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("watch: start ffmpeg: %w", err)
	}
	return &ffmpegStream{cmd: cmd, out: out, r: NewReader(out, f.MaxPixels), stderr: tail}, nil
}

// ExitError is a stream's end when ffmpeg failed.
type ExitError struct {
	Err    error  // from exec (*exec.ExitError, ...)
	Stderr string // the end of ffmpeg's error output
}

func (e *ExitError) Error() string {
	msg := "watch: ffmpeg " + e.Err.Error()
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

func (e *ExitError) Unwrap() error { return e.Err }

type ffmpegStream struct {
	cmd    *exec.Cmd
	out    io.ReadCloser
	r      *Reader
	stderr *tailBuffer

	once    sync.Once
	waitErr error
	closed  sync.Once
}

func (s *ffmpegStream) Next(dst *imageio.RGB) (*imageio.RGB, error) {
	img, err := s.r.Next(dst)
	if err == nil {
		return img, nil
	}
	if werr := s.wait(); werr != nil {
		return nil, werr
	}
	return nil, err
}

// wait reaps ffmpeg once and turns a failure into an ExitError.
func (s *ffmpegStream) wait() error {
	s.once.Do(func() {
		if err := s.cmd.Wait(); err != nil {
			s.waitErr = &ExitError{Err: err, Stderr: s.stderr.String()}
		}
	})
	return s.waitErr
}

func (s *ffmpegStream) Close() error {
	s.closed.Do(func() {
		s.cmd.Process.Signal(syscall.SIGTERM) // (an error once it has exited)
		s.out.Close()
	})
	err := s.wait()
	var ee *ExitError
	if errors.As(err, &ee) {
		return nil // stopped by us, or already reported by Next
	}
	return err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
