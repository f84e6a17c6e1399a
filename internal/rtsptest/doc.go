// Package rtsptest runs a real RTSP server on 127.0.0.1 for the tests of
// flycl watch: GStreamer's RTSP server (Debian's
// gir1.2-gst-rtsp-server-1.0 with python3-gi, gstreamer1.0-plugins-base
// and -good, and -ugly for H.264), driven by a small Python script run
// with /usr/bin/python3, serving JPEG frames the test gives in a loop as
// Motion JPEG or H.264. A test that finds no such server skips, saying
// which package is missing. Only tests import it.
package rtsptest
