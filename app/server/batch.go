package server

import (
	"context"
	"errors"
)

// Predictions are scored in batches: a request that arrives while others
// are waiting is scored together with them in one Scores call, so W (20 MB
// at m=10000, d=512) is read once for all of them. One scorer goroutine
// takes the batches; a batch is whatever is queued when it becomes free
// (with one request at a time nothing waits: no timer, no added latency),
// and its Scores call splits W's rows over all CPUs. A batch holds
// requests of one snapshot only. Batching changes no answer: a
// snapshot's scores of a sample do not depend on the other samples of
// the call (flycl.Predictor.Scores sums row by row), so each request gets
// the bits it would get alone.

// scoreReq is one request's features waiting to be scored.
type scoreReq struct {
	ctx  context.Context
	sn   ModelView
	x    []float32
	done chan scoreRes
}

type scoreRes struct {
	scores []float32
	cos    []float64 // nil when the view gives none (see CosineScorer)
	err    error
}

// maxBatchRows bounds the rows of one batched Scores call.
const maxBatchRows = 256

// score returns sn's scores of x and, when sn is a CosineScorer, the
// cosines of the samples' codes to the class sums (else nil), batched
// with concurrent requests.
func (s *Server) score(ctx context.Context, sn ModelView, x []float32) ([]float32, []float64, error) {
	d := sn.Dim()
	if d <= 0 || len(x)%d != 0 || len(x)/d > maxBatchRows/4 {
		return scoreView(ctx, sn, x) // large requests are batches already
	}
	req := &scoreReq{ctx: ctx, sn: sn, x: x, done: make(chan scoreRes, 1)}
	select {
	case s.scoreq <- req:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-s.stop:
		return scoreView(ctx, sn, x)
	}
	select {
	case r := <-req.done:
		return r.scores, r.cos, r.err
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-s.scorersGone: // the server was closed with this request queued
		return scoreView(ctx, sn, x)
	}
}

// scoreView returns sn's scores of x, and its cosines when it is a
// CosineScorer (else nil).
func scoreView(ctx context.Context, sn ModelView, x []float32) ([]float32, []float64, error) {
	if cs, ok := sn.(CosineScorer); ok {
		return cs.ScoresCosines(ctx, x)
	}
	sc, err := sn.Scores(ctx, x)
	return sc, nil, err
}

// scorer takes a request, adds every request of the same snapshot that is
// already waiting (up to maxBatchRows rows), and scores them at once, until
// the server stops.
func (s *Server) scorer() {
	var held *scoreReq
	for {
		first := held
		held = nil
		if first == nil {
			select {
			case first = <-s.scoreq:
			case <-s.stop:
				// Answer what is queued, then stop.
				for {
					select {
					case r := <-s.scoreq:
						s.runBatch([]*scoreReq{r})
					default:
						return
					}
				}
			}
		}
		batch := []*scoreReq{first}
		rows := len(first.x) / first.sn.Dim()
	drain:
		for rows < maxBatchRows {
			select {
			case r := <-s.scoreq:
				if r.sn != first.sn {
					held = r // the next batch starts with it
					break drain
				}
				batch = append(batch, r)
				rows += len(r.x) / r.sn.Dim()
			default:
				break drain
			}
		}
		s.runBatch(batch)
	}
}

func (s *Server) runBatch(batch []*scoreReq) {
	live := batch[:0]
	for _, r := range batch {
		if r.ctx.Err() != nil {
			r.done <- scoreRes{err: r.ctx.Err()}
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	s.met.batch.Observe(float64(len(live)))
	sn := live[0].sn
	if len(live) == 1 {
		sc, cos, err := scoreView(live[0].ctx, sn, live[0].x)
		live[0].done <- scoreRes{sc, cos, err}
		return
	}
	var x []float32
	for _, r := range live {
		x = append(x, r.x...)
	}
	sc, cos, err := scoreView(context.Background(), sn, x)
	var ie *InputError
	if err != nil && errors.As(err, &ie) {
		// One request's input is bad: score each alone so the others
		// are not failed by it.
		for _, r := range live {
			sc, cos, err := scoreView(r.ctx, sn, r.x)
			r.done <- scoreRes{sc, cos, err}
		}
		return
	}
	nc := len(sn.Classes())
	off := 0
	for _, r := range live {
		n := len(r.x) / sn.Dim()
		if err != nil {
			r.done <- scoreRes{err: err}
			continue
		}
		res := scoreRes{scores: sc[off*nc : (off+n)*nc : (off+n)*nc]}
		if cos != nil {
			res.cos = cos[off : off+n : off+n]
		}
		r.done <- res
		off += n
	}
}
