package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/extworker"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/runnerlib"
	"google.golang.org/protobuf/proto"
)

// ServeJobService runs prism as a job service on port (as the SDK's prism
// command does, without its web UI) until ctx is done. Pipelines are
// submitted to it as to any portable runner (--runner=universal
// --endpoint=localhost:PORT, or RunOnWorkers). Prism listens on every
// interface of the machine (its own choice); clients here use 127.0.0.1.
func ServeJobService(ctx context.Context, port int) error {
	if port <= 0 {
		return fmt.Errorf("pipeline: job service needs a port, got %d", port)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if _, err := prism.CreateJobServer(ctx, prism.Options{Port: port, CancelFn: cancel}); err != nil {
		return fmt.Errorf("pipeline: start prism job service on port %d: %w", port, err)
	}
	<-ctx.Done()
	return nil
}

// ServeWorkerPool runs an external worker pool on localhost:port until ctx
// is done: the Beam Go SDK's external worker service (the one LOOPBACK
// uses), started in this process, so that a runner given the environment
// EXTERNAL with config localhost:port runs its SDK harness here, in this
// process, with this process's working directory and environment.
//
// Its harnesses report metrics under short ids qualified by their worker
// id (shortids.go), so that a runner which keeps one table of short ids
// per job, as prism does, neither fails the job nor mixes up the metrics
// of several worker pools.
func ServeWorkerPool(ctx context.Context, port int) error {
	if port <= 0 {
		return fmt.Errorf("pipeline: worker pool needs a port, got %d", port)
	}
	if err := enableWorkerShortIDs(); err != nil {
		return fmt.Errorf("pipeline: worker pool on localhost:%d: %w", port, err)
	}
	srv, err := extworker.StartLoopback(ctx, port)
	if err != nil {
		return fmt.Errorf("pipeline: start worker pool on localhost:%d: %w", port, err)
	}
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Stop(stop)
}

// RunOnWorkers submits p to the portable job service at endpoint
// (host:port) with one EXTERNAL environment per worker pool in workers
// (host:port each, served by ServeWorkerPool): the transforms of
// extraction branch b (Options.Branches, scope BranchScope(b)) run on
// workers[b mod len(workers)], everything else (summing the pieces, the
// final step) on workers[0]. The pipeline's data crosses between the
// worker processes only through the runner, encoded by the pipeline's
// coders. It waits for the job to finish.
func RunOnWorkers(ctx context.Context, p *beam.Pipeline, endpoint string, workers []string) (beam.PipelineResult, error) {
	if len(workers) == 0 {
		return nil, errors.New("pipeline: no worker pools")
	}
	if !beam.Initialized() {
		return nil, errors.New("pipeline: beam.Init has not been called")
	}
	edges, _, err := p.Build()
	if err != nil {
		return nil, err
	}
	envs := make([]*pipepb.Environment, len(workers))
	for i, w := range workers {
		if envs[i], err = graphx.CreateEnvironment(ctx, graphx.URNEnvExternal, func(context.Context) string { return w }); err != nil {
			return nil, err
		}
	}
	pp, err := graphx.Marshal(edges, &graphx.Options{Environment: envs[0]})
	if err != nil {
		return nil, fmt.Errorf("pipeline: marshal: %w", err)
	}
	if err := assignEnvironments(pp, envs); err != nil {
		return nil, err
	}
	// The Go environment names the worker binary as its artifact: this
	// one, which is what the worker pools run (they serve the harness in
	// their own copy of it).
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	res, err := runnerlib.Execute(ctx, pp, endpoint, &runnerlib.JobOptions{Name: "flycl-beam", Worker: self}, false)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// assignEnvironments gives the transforms of branch b the environment of
// worker b mod len(envs). The marshalled pipeline has one environment
// (the default, with the worker binary as its dependency), which stays
// worker 0's; the others are copies with their own endpoint and no
// artifacts (an external pool runs the harness in its own binary).
func assignEnvironments(p *pipepb.Pipeline, envs []*pipepb.Environment) error {
	comps := p.GetComponents()
	var def string
	for id := range comps.GetEnvironments() {
		if def != "" {
			return fmt.Errorf("pipeline: marshalled pipeline has several environments (%s, %s)", def, id)
		}
		def = id
	}
	if def == "" {
		return errors.New("pipeline: marshalled pipeline has no environment")
	}
	ids := make([]string, len(envs))
	ids[0] = def
	for i := 1; i < len(envs); i++ {
		ids[i] = fmt.Sprintf("%s-worker-%d", def, i)
		e := proto.Clone(envs[i]).(*pipepb.Environment)
		e.Dependencies = nil
		comps.Environments[ids[i]] = e
	}
	moved := 0
	for _, t := range comps.GetTransforms() {
		if t.GetEnvironmentId() == "" {
			continue // runner transforms (GroupByKey, Impulse)
		}
		b, ok := branchOf(t.GetUniqueName())
		if !ok {
			continue
		}
		t.EnvironmentId = ids[b%len(ids)]
		moved++
	}
	if len(envs) > 1 && moved == 0 {
		return errors.New("pipeline: no transform of an extraction branch found (Options.Branches)")
	}
	return nil
}

// branchOf returns the branch whose scope holds the transform named name
// ("flycl/branch-3/..." is branch 3).
func branchOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "flycl/branch-")
	if !ok {
		return 0, false
	}
	num, _, _ := strings.Cut(rest, "/")
	b, err := strconv.Atoi(num)
	return b, err == nil && b >= 0
}
