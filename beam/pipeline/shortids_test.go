package pipeline

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
)

// fakeWorker is one SDK worker process as the runner sees it: its own
// numbering of short ids (what the harness's short-id cache holds) and
// the payloads of one bundle under them.
type fakeWorker struct {
	id       string // the runner's worker id (grpcx.WriteWorkerID, as the external worker service does)
	meaning  map[string]*pipepb.MonitoringInfo
	payloads map[string][]byte
}

// answer is the harness's handling of a metadata request after the
// request hook: the infos of the ids it knows, nil for the others (as
// the harness's shortIdsToInfos).
func (w *fakeWorker) answer(req *fnpb.InstructionRequest) *fnpb.InstructionResponse {
	m := map[string]*pipepb.MonitoringInfo{}
	for _, id := range req.GetMonitoringInfos().GetMonitoringInfoId() {
		m[id] = w.meaning[id]
	}
	return &fnpb.InstructionResponse{Response: &fnpb.InstructionResponse_MonitoringInfos{
		MonitoringInfos: &fnpb.MonitoringInfosMetadataResponse{MonitoringInfo: m}}}
}

func info(urn, pcol string) *pipepb.MonitoringInfo {
	return &pipepb.MonitoringInfo{Urn: urn, Labels: map[string]string{"PCOLLECTION": pcol}}
}

// TestShortIDsPerWorker drives two workers whose short ids mean different
// metrics ("1" is a sampled byte size on one and an element count on the
// other, as when their first bundles differ) through the hooks and a
// runner that keeps one table of short ids per job (as prism v2.77.0's
// metricsStore): every payload must be resolved to the metric its own
// worker meant. Without the hooks the second worker's "1" resolves to the
// first worker's distribution (the test checks that too, so it fails if
// the two workers stop colliding).
func TestShortIDsPerWorker(t *testing.T) {
	const count, size = "beam:metric:element_count:v1", "beam:metric:sampled_byte_size:v1"
	workers := []*fakeWorker{
		{id: "job-001_go", meaning: map[string]*pipepb.MonitoringInfo{"1": info(size, "a"), "2": info(count, "a")},
			payloads: map[string][]byte{"1": {1, 9, 9, 9}, "2": {1}}},
		{id: "job-001_go-worker-1", meaning: map[string]*pipepb.MonitoringInfo{"1": info(count, "b"), "2": info(size, "b")},
			payloads: map[string][]byte{"1": {7}, "2": {7, 3, 1, 2}}},
	}
	for _, hooked := range []bool{false, true} {
		table := map[string]*pipepb.MonitoringInfo{} // the runner's one table per job
		type resolved struct {
			payload []byte
			info    *pipepb.MonitoringInfo
		}
		var got []resolved
		var want []resolved
		for _, w := range workers {
			ctx := grpcx.WriteWorkerID(context.Background(), w.id)
			resp := &fnpb.InstructionResponse{Response: &fnpb.InstructionResponse_ProcessBundle{
				ProcessBundle: &fnpb.ProcessBundleResponse{MonitoringData: maps.Clone(w.payloads)}}}
			if hooked {
				if err := qualifyShortIDs(ctx, nil, resp); err != nil {
					t.Fatal(err)
				}
			}
			data := resp.GetProcessBundle().GetMonitoringData()
			// the runner asks this worker for the ids it does not know
			var unknown []string
			for _, id := range slices.Sorted(maps.Keys(data)) {
				if _, ok := table[id]; !ok {
					unknown = append(unknown, id)
				}
			}
			if len(unknown) > 0 {
				req := &fnpb.InstructionRequest{Request: &fnpb.InstructionRequest_MonitoringInfos{
					MonitoringInfos: &fnpb.MonitoringInfosMetadataRequest{MonitoringInfoId: slices.Clone(unknown)}}}
				if hooked {
					if _, err := unqualifyShortIDs(ctx, req); err != nil {
						t.Fatal(err)
					}
				}
				md := w.answer(req)
				if hooked {
					if err := qualifyShortIDs(ctx, req, md); err != nil {
						t.Fatal(err)
					}
				}
				for _, id := range unknown {
					mi, ok := md.GetMonitoringInfos().GetMonitoringInfo()[id]
					if !ok || mi == nil {
						t.Fatalf("hooked=%v: worker %s answered no metadata for %q asked (answer %v)", hooked, w.id, id, md)
					}
					table[id] = mi
				}
			}
			for id, p := range data {
				got = append(got, resolved{p, table[id]})
			}
			for id, p := range w.payloads {
				want = append(want, resolved{p, w.meaning[id]})
			}
		}
		wrong := 0
		for _, g := range got {
			i := slices.IndexFunc(want, func(w resolved) bool { return slices.Equal(w.payload, g.payload) })
			if i < 0 || want[i].info != g.info {
				wrong++
			}
		}
		switch {
		case hooked && wrong != 0:
			t.Errorf("with the hooks, %d of %d payloads resolved to another worker's metric", wrong, len(got))
		case !hooked && wrong == 0:
			t.Errorf("without the hooks no payload was misresolved: the workers do not collide, the test proves nothing")
		}
	}
}

// TestShortIDsWithoutWorkerID: a harness context without a worker id
// leaves the short ids as they are and says why.
func TestShortIDsWithoutWorkerID(t *testing.T) {
	resp := &fnpb.InstructionResponse{Response: &fnpb.InstructionResponse_ProcessBundleProgress{
		ProcessBundleProgress: &fnpb.ProcessBundleProgressResponse{MonitoringData: map[string][]byte{"1": {1}}}}}
	if err := qualifyShortIDs(context.Background(), nil, resp); !errors.Is(err, errNoWorkerID) {
		t.Fatalf("error %v, want errNoWorkerID", err)
	}
	if got := slices.Collect(maps.Keys(resp.GetProcessBundleProgress().GetMonitoringData())); !slices.Equal(got, []string{"1"}) {
		t.Errorf("short ids %v, want [1] unchanged", got)
	}
	req := &fnpb.InstructionRequest{Request: &fnpb.InstructionRequest_MonitoringInfos{
		MonitoringInfos: &fnpb.MonitoringInfosMetadataRequest{MonitoringInfoId: []string{"w/1"}}}}
	if _, err := unqualifyShortIDs(context.Background(), req); !errors.Is(err, errNoWorkerID) {
		t.Fatalf("error %v, want errNoWorkerID", err)
	}
	if got := req.GetMonitoringInfos().GetMonitoringInfoId(); !slices.Equal(got, []string{"w/1"}) {
		t.Errorf("requested ids %v, want [w/1] unchanged", got)
	}
}
