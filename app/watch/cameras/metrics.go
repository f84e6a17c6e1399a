package cameras

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the cameras' Prometheus metrics, read from their counters
// at each scrape.
type metrics struct {
	reg  *prometheus.Registry
	cams []*camera
}

var (
	descRead = prometheus.NewDesc("flycl_watch_frames_read_total",
		"Frames read from the camera's source.", []string{"camera"}, nil)
	descClassified = prometheus.NewDesc("flycl_watch_frames_classified_total",
		"Frames classified (all the zones of a frame: one).", []string{"camera"}, nil)
	descDropped = prometheus.NewDesc("flycl_watch_frames_dropped_total",
		"Frames of a live source skipped unclassified because a newer one arrived.", []string{"camera"}, nil)
	descReconnects = prometheus.NewDesc("flycl_watch_reconnects_total",
		"Reconnections of the camera's source (failed attempts included).", []string{"camera"}, nil)
	descEvents = prometheus.NewDesc("flycl_watch_events_total",
		"Debounced changes of the answer (all zones).", []string{"camera"}, nil)
	descAge = prometheus.NewDesc("flycl_watch_last_frame_age_seconds",
		"Seconds since the camera's last frame was read (since the camera started, before its first frame).", []string{"camera"}, nil)
	descUp = prometheus.NewDesc("flycl_watch_camera_up",
		"1 while the camera runs, 0 once it has stopped (its file ended, or it failed).", []string{"camera"}, nil)
)

func newMetrics(cams []*camera) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), cams: cams}
	m.reg.MustRegister(m, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRead, descClassified, descDropped, descReconnects, descEvents, descAge, descUp} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	for _, c := range m.cams {
		n := c.cfg.Name
		s := c.counters.Snapshot()
		running, start := c.state()
		ch <- prometheus.MustNewConstMetric(descRead, prometheus.CounterValue, float64(s.Read), n)
		ch <- prometheus.MustNewConstMetric(descClassified, prometheus.CounterValue, float64(s.Classified), n)
		ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(s.Dropped), n)
		ch <- prometheus.MustNewConstMetric(descReconnects, prometheus.CounterValue, float64(s.Reconnects), n)
		ch <- prometheus.MustNewConstMetric(descEvents, prometheus.CounterValue, float64(s.Events), n)
		last := s.LastFrame
		if last.IsZero() {
			last = start
		}
		if !last.IsZero() {
			ch <- prometheus.MustNewConstMetric(descAge, prometheus.GaugeValue, now.Sub(last).Seconds(), n)
		}
		up := 0.0
		if running {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up, n)
	}
}
