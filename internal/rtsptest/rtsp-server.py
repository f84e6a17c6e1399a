#!/usr/bin/python3
"""A small RTSP server for the tests of flycl watch: GStreamer's RTSP server
(Debian: gir1.2-gst-rtsp-server-1.0, python3-gi, gstreamer1.0-plugins-base,
-good and, for --codec h264, -ugly) serving a folder of JPEG frames
(frame-000.jpg, frame-001.jpg, ...) in a loop at --fps frames per second on
rtsp://127.0.0.1:PORT/clip, as Motion JPEG (RTP/JPEG, RFC 2435) or H.264 (as
most cameras send). It prints "ready" on stdout once it listens and serves
until SIGTERM or SIGINT; a port it cannot bind exits with status 2.

    rtsp-server.py --port 8554 --frames DIR [--fps 10] [--codec jpeg|h264]
"""
import argparse
import os
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--frames", required=True, help="folder of frame-NNN.jpg")
    ap.add_argument("--fps", type=int, default=10)
    ap.add_argument("--codec", choices=["jpeg", "h264"], default="jpeg")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.frames, "frame-000.jpg")):
        sys.exit("rtsp-server: no frame-000.jpg in " + a.frames)
    Gst.init(None)
    src = ("multifilesrc location=%s loop=true caps=image/jpeg,framerate=%d/1"
           % (os.path.join(a.frames, "frame-%03d.jpg"), a.fps))
    if a.codec == "jpeg":
        # re-encoded by GStreamer's own jpegenc: ffmpeg's RTP/JPEG
        # depacketiser misreads other encoders' files sent as they are
        pay = "jpegdec ! videoconvert ! video/x-raw,format=I420 ! jpegenc ! rtpjpegpay name=pay0 pt=26"
    else:
        pay = ("jpegdec ! videoconvert ! video/x-raw,format=I420 ! "
               "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=%d ! "
               "rtph264pay name=pay0 pt=96 config-interval=1" % a.fps)
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch("( %s ! %s )" % (src, pay))
    factory.set_shared(True)  # the clients of one server see one stream
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(a.port))
    server.get_mount_points().add_factory("/clip", factory)
    if server.attach(None) == 0:
        print("rtsp-server: cannot listen on 127.0.0.1:%d" % a.port, file=sys.stderr)
        sys.exit(2)
    loop = GLib.MainLoop()
    for s in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, s, loop.quit)
    print("ready", flush=True)
    loop.run()


if __name__ == "__main__":
    main()
