package pipeline

import (
	"context"
	"errors"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/harness"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/util/hooks"
	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"google.golang.org/grpc/metadata"
)

// Metric short ids across worker processes.
//
// An SDK harness reports its metrics (element counts, sampled byte sizes,
// user counters, ...) as payloads keyed by short ids, which each worker
// process numbers itself, in the order it first meets each metric
// ("1", "2", ...: one counter for the whole process); the runner asks the
// worker what an id it does not know means. Prism (v2.77.0) keeps one
// table of short ids per job, not per worker: with several worker
// processes, worker B's "5" is decoded as whatever worker A's "5" meant.
// That misattributes counts, and when A's "5" is a distribution (a
// PCollection's sampled byte size: count, sum, min, max) and B's "5" a
// counter (one number), decoding it fails and prism fails the job.
//
// The hook below, enabled in the harnesses a worker pool serves
// (ServeWorkerPool), makes every short id the runner sees unique to the
// worker: "<worker id>/<short id>", with the worker id the runner gave
// the worker (unique within a job: prism builds it from the job and the
// environment). A runner treats short ids as opaque strings, so nothing
// else changes; each id then means one metric in the whole job, and the
// job's metrics are those of one process.

// shortIDsHook is the name of the harness hook (hooks.RegisterHook).
const shortIDsHook = "flycl:worker-short-ids"

// workerIDKey is the gRPC metadata key under which the external worker
// service puts the runner's worker id into the harness's context
// (grpcx.WriteWorkerID), as every Fn API call of the harness carries it.
const workerIDKey = "worker_id"

// errNoWorkerID: the harness context carries no worker id (not started by
// an external worker service): short ids are left as they are.
var errNoWorkerID = errors.New("pipeline: harness context has no worker id: metric short ids left unqualified")

func init() {
	hooks.RegisterHook(shortIDsHook, func([]string) hooks.Hook {
		return hooks.Hook{Req: unqualifyShortIDs, Resp: qualifyShortIDs}
	})
}

// enableWorkerShortIDs turns the hook on for every harness this process
// starts from now on (the hooks travel in the process's pipeline options,
// which a worker pool's harnesses read at start). The SDK's remote logging
// hook stays off, as it was: it would send the whole process's log to the
// runner of whichever job started a harness last.
func enableWorkerShortIDs() error {
	hooks.DisableHook(harness.DefaultRemoteLoggingHook)
	if err := hooks.EnableHook(shortIDsHook); err != nil {
		return err
	}
	hooks.SerializeHooksToOptions()
	return nil
}

// workerPrefix returns "<worker id>/" from the harness context.
func workerPrefix(ctx context.Context) (string, error) {
	md, _ := metadata.FromOutgoingContext(ctx)
	ids := md.Get(workerIDKey)
	if len(ids) != 1 || ids[0] == "" {
		return "", errNoWorkerID
	}
	return ids[0] + "/", nil
}

// qualifyShortIDs prefixes the short ids of a response with the worker's
// id: the metric payloads of a bundle (final or progress) and the
// metadata the runner asked for.
func qualifyShortIDs(ctx context.Context, _ *fnpb.InstructionRequest, resp *fnpb.InstructionResponse) error {
	if resp == nil {
		return nil
	}
	p, err := workerPrefix(ctx)
	if err != nil {
		return err
	}
	if r := resp.GetProcessBundle(); r != nil {
		r.MonitoringData = qualify(p, r.MonitoringData)
	}
	if r := resp.GetProcessBundleProgress(); r != nil {
		r.MonitoringData = qualify(p, r.MonitoringData)
	}
	if r := resp.GetHarnessMonitoringInfos(); r != nil {
		r.MonitoringData = qualify(p, r.MonitoringData)
	}
	if r := resp.GetMonitoringInfos(); r != nil {
		r.MonitoringInfo = qualify(p, r.MonitoringInfo)
	}
	return nil
}

// unqualifyShortIDs strips the worker's prefix from the short ids the
// runner asks the metadata of, so that the harness finds its own ids
// (the response hook qualifies them again). It changes nothing else: the
// request is this worker's copy, read only by the harness after the hook.
func unqualifyShortIDs(ctx context.Context, req *fnpb.InstructionRequest) (context.Context, error) {
	r := req.GetMonitoringInfos()
	if r == nil {
		return ctx, nil
	}
	p, err := workerPrefix(ctx)
	if err != nil {
		return ctx, err
	}
	for i, id := range r.MonitoringInfoId {
		if s, ok := strings.CutPrefix(id, p); ok {
			r.MonitoringInfoId[i] = s
		}
	}
	return ctx, nil
}

// qualify returns m with every key prefixed by p.
func qualify[V any](p string, m map[string]V) map[string]V {
	if len(m) == 0 {
		return m
	}
	q := make(map[string]V, len(m))
	for k, v := range m {
		q[p+k] = v
	}
	return q
}
