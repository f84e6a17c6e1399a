package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec   // endpoint, code
	latency   *prometheus.HistogramVec // endpoint
	stages    *prometheus.HistogramVec // stage
	learns    *prometheus.CounterVec   // result
	version   prometheus.Gauge
	classes   prometheus.Gauge
	samples   prometheus.Gauge
	queue     prometheus.Gauge
	extracted prometheus.Counter
	batch     prometheus.Histogram
	answers   *prometheus.CounterVec // answer: known or unknown
	// the inbox (app/server/inbox.go)
	inboxItems   prometheus.Gauge
	inboxBytes   prometheus.Gauge
	inboxKept    *prometheus.CounterVec // why
	inboxDropped *prometheus.CounterVec // reason: full, busy, error
	inboxRemoved *prometheus.CounterVec // reason: learned, discarded
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flycl_http_requests_total", Help: "HTTP requests by endpoint and status code.",
		}, []string{"endpoint", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "flycl_http_request_duration_seconds", Help: "HTTP request latency by endpoint.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"endpoint"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "flycl_learn_stage_duration_seconds", Help: "Duration of each stage of a learn (extract, projection, topk, gram, gcv, factor, solve, save, queue).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18),
		}, []string{"stage"}),
		learns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flycl_learns_total", Help: "Learn and forget operations by result (ok, error, rejected).",
		}, []string{"result"}),
		version:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "flycl_model_version", Help: "Version of the served model."}),
		classes:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "flycl_model_classes", Help: "Classes of the served model."}),
		samples:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "flycl_model_samples", Help: "Training samples seen by the served model."}),
		queue:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "flycl_learn_queue_length", Help: "Learns waiting or running."}),
		extracted: prometheus.NewCounter(prometheus.CounterOpts{Name: "flycl_images_extracted_total", Help: "Images run through the backbone."}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "flycl_predict_batch_requests",
			Help: "Predict requests scored together in one batch.", Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flycl_predictions_total", Help: "Predicted samples by answer: known (one of the model's classes) or unknown (rejected).",
		}, []string{"answer"}),
		inboxItems: prometheus.NewGauge(prometheus.GaugeOpts{Name: "flycl_inbox_items", Help: "Items in the labelling inbox."}),
		inboxBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "flycl_inbox_bytes", Help: "Bytes of the labelling inbox's files."}),
		inboxKept: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flycl_inbox_kept_total", Help: "Predictions kept in the labelling inbox, by why (unknown, low-probability, low-margin).",
		}, []string{"why"}),
		inboxDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flycl_inbox_dropped_total", Help: "Inbox items dropped unlabelled: full (the oldest, to make room), busy (the keeper's queue was full), error (could not be stored).",
		}, []string{"reason"}),
		inboxRemoved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flycl_inbox_removed_total", Help: "Inbox items removed by a person: learned or discarded.",
		}, []string{"reason"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.stages, m.learns, m.version, m.classes, m.samples, m.queue, m.extracted, m.batch, m.answers,
		m.inboxItems, m.inboxBytes, m.inboxKept, m.inboxDropped, m.inboxRemoved,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// model records the gauges of a newly published snapshot.
func (m *metrics) model(s ModelView) {
	i := s.Info()
	m.version.Set(float64(i.Version))
	m.classes.Set(float64(i.Classes))
	m.samples.Set(float64(i.Samples))
}
