package rtsptest

import (
	"bufio"
	_ "embed"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

//go:embed rtsp-server.py
var script []byte

// Python is the interpreter that has Debian's GStreamer bindings.
const Python = "/usr/bin/python3"

// Codecs the server sends.
const (
	JPEG = "jpeg" // RTP/JPEG (RFC 2435): gstreamer1.0-plugins-good
	H264 = "h264" // H.264, as most cameras send: gstreamer1.0-plugins-ugly (x264enc)
)

// Need skips t unless an RTSP server sending codec can run here.
func Need(t testing.TB, codec string) {
	t.Helper()
	if _, err := os.Stat(Python); err != nil {
		t.Skipf("no %s for GStreamer's RTSP server (apt-get install python3-gi gir1.2-gst-rtsp-server-1.0): %v", Python, err)
	}
	elems := "'multifilesrc', 'jpegdec', 'jpegenc', 'rtpjpegpay'"
	if codec == H264 {
		elems += ", 'x264enc', 'rtph264pay'"
	}
	check := `import gi
gi.require_version('Gst', '1.0'); gi.require_version('GstRtspServer', '1.0')
from gi.repository import Gst, GstRtspServer
Gst.init(None)
missing = [e for e in (` + elems + `,) if Gst.ElementFactory.find(e) is None]
if missing: raise SystemExit('missing GStreamer elements: ' + ', '.join(missing))`
	if out, err := exec.Command(Python, "-c", check).CombinedOutput(); err != nil {
		t.Skipf("no GStreamer RTSP server for %s (apt-get install python3-gi gir1.2-gst-rtsp-server-1.0 gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-ugly): %v: %s",
			codec, err, lastLine(out))
	}
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// Options describe a server.
type Options struct {
	// Frames are the JPEG files served in a loop, in order (each a
	// multiple of 8 pixels wide and high for JPEG).
	Frames [][]byte
	FPS    int    // frames per second (default 10)
	Codec  string // JPEG (default) or H264
	Port   int    // 0: a free port
}

// Server is a running RTSP server.
type Server struct {
	URL  string // rtsp://127.0.0.1:PORT/clip
	Port int
	cmd  *exec.Cmd
	done chan struct{}
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start starts a server and waits until it listens; it is killed at the
// end of the test. Call Need first.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	s, err := Launch(t, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Launch is Start returning its error instead of failing the test: for a
// goroutine other than the test's.
func Launch(t testing.TB, o Options) (*Server, error) {
	dir := t.TempDir()
	if len(o.Frames) == 0 || len(o.Frames) > 1000 {
		return nil, fmt.Errorf("rtsptest: %d frames, want 1 to 1000", len(o.Frames))
	}
	for i, f := range o.Frames {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("frame-%03d.jpg", i)), f, 0o644); err != nil {
			return nil, err
		}
	}
	py := filepath.Join(dir, "rtsp-server.py")
	if err := os.WriteFile(py, script, 0o644); err != nil {
		return nil, err
	}
	if o.FPS <= 0 {
		o.FPS = 10
	}
	if o.Codec == "" {
		o.Codec = JPEG
	}
	if o.Port == 0 {
		o.Port = FreePort(t)
	}
	var last error
	for range 20 { // the port of a server just killed may take a moment to be free
		s, err := start(py, dir, o)
		if err == nil {
			t.Cleanup(s.Stop)
			return s, nil
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("rtsptest: start the server on port %d: %w", o.Port, last)
}

func start(py, dir string, o Options) (*Server, error) {
	cmd := exec.Command(Python, py, "--port", strconv.Itoa(o.Port), "--frames", dir, "--fps", strconv.Itoa(o.FPS), "--codec", o.Codec)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{URL: fmt.Sprintf("rtsp://127.0.0.1:%d/clip", o.Port), Port: o.Port, cmd: cmd, done: make(chan struct{})}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := sc.Scan() && sc.Text() == "ready"
		ready <- ok
		for sc.Scan() {
		}
		cmd.Wait()
		close(s.done)
	}()
	select {
	case ok := <-ready:
		if ok {
			return s, nil
		}
		<-s.done
		return nil, fmt.Errorf("%v: %s", cmd.ProcessState, strings.TrimSpace(stderr.String()))
	case <-time.After(20 * time.Second):
		s.Stop()
		return nil, fmt.Errorf("not ready after 20 s: %s", strings.TrimSpace(stderr.String()))
	}
}

// Stop kills the server at once (SIGKILL: a camera that vanishes) and
// waits for it to exit. It may be called more than once.
func (s *Server) Stop() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}
