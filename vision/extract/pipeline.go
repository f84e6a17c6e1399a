package extract

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/transform"
)

// pipeline decodes and preprocesses images lo..hi of a data set on a pool
// of worker goroutines, continuously across batch boundaries, into a
// bounded ring of batch buffers: at most depth batches (decoded or being
// decoded) exist at any time, so memory is bounded by depth·batch images
// whatever the data set's size. Batches come out of Next in order.
type pipeline struct {
	order chan *pbatch
	free  chan []float32
	stop  context.CancelFunc
	wg    sync.WaitGroup
}

type pbatch struct {
	lo, n   int
	x       []float32
	pending atomic.Int32
	done    chan struct{}
	errMu   sync.Mutex
	err     error
}

func (b *pbatch) fail(err error) {
	b.errMu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.errMu.Unlock()
}

// newPipeline starts decoding. workers <= 0 means one per CPU; depth < 2
// means 2 (one batch in inference, one being decoded).
func newPipeline(ctx context.Context, data dataset.Dataset, preset transform.Preset, lo, hi, batch, workers, depth int) *pipeline {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	depth = max(depth, 2)
	// no more buffers than batches, and none larger than the images: a
	// call for one image holds one image's buffer
	batches := (hi - lo + batch - 1) / max(batch, 1)
	depth = max(1, min(depth, batches))
	size := max(1, min(batch, hi-lo))
	per := 3 * preset.Crop * preset.Crop
	ctx, cancel := context.WithCancel(ctx)
	p := &pipeline{order: make(chan *pbatch, depth), free: make(chan []float32, depth), stop: cancel}
	for i := 0; i < depth; i++ {
		p.free <- make([]float32, size*per)
	}
	type job struct {
		b *pbatch
		i int
	}
	jobs := make(chan job, batch)
	// producer: claim a free buffer, announce the batch, queue its images
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(jobs)
		defer close(p.order)
		for b := lo; b < hi; b += batch {
			var buf []float32
			select {
			case buf = <-p.free:
			case <-ctx.Done():
				return
			}
			n := min(batch, hi-b)
			pb := &pbatch{lo: b, n: n, x: buf[:n*per], done: make(chan struct{})}
			pb.pending.Store(int32(n))
			p.order <- pb // never blocks: at most depth buffers, order holds depth
			for i := 0; i < n; i++ {
				select {
				case jobs <- job{pb, i}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	for w := 0; w < workers; w++ {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			pre := preset.NewPreprocessor() // per worker: buffers and coefficients reused
			for jb := range jobs {
				b, i := jb.b, jb.i
				if err := ctx.Err(); err != nil {
					b.fail(err) // not decoded: the batch must not be used
				} else if img, err := data.Image(b.lo + i); err != nil {
					b.fail(&ImageError{Index: b.lo + i, Path: data.Path(b.lo + i), Err: err})
				} else {
					pre.Tensor(img, b.x[i*per:(i+1)*per])
				}
				if b.pending.Add(-1) == 0 {
					close(b.done)
				}
			}
		}()
	}
	return p
}

// next returns the next batch in order, waiting for its images; nil at the
// end. Release the batch's buffer with release once it is consumed.
func (p *pipeline) next(ctx context.Context) (*pbatch, error) {
	b, ok := <-p.order
	if !ok {
		return nil, nil // the end, or the producer stopped on ctx: the caller checks what it got
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if b.err != nil {
		return nil, b.err
	}
	return b, nil
}

func (p *pipeline) release(b *pbatch) { p.free <- b.x[:cap(b.x)] }

// close stops the workers and waits for them.
func (p *pipeline) close() {
	p.stop()
	// unblock a producer waiting on a free buffer or on order
	go func() {
		for range p.order {
		}
	}()
	p.wg.Wait()
}
