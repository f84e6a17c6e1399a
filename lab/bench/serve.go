package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/server"
	apipkg "github.com/flycl/flycl/app/server/api"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/proctime"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// ServeOptions are the inputs of Serve.
type ServeOptions struct {
	Backbone *backbone.Model // the served backbone (its "features" output and own preset)
	Spec     string          // what Backbone was opened from (recorded in the model's pipeline)
	Images   []string        // JPEG files (at least 40) to predict and learn
	Config   flycl.Config    // the served model's configuration
	N        int             // single-image predicts (and bare backbone runs)
	Clients  []int           // concurrent clients of feature predicts: one measurement each; the first also runs during learns
	Learns   int             // learns run while predicting
	Duration time.Duration   // of each feature-predict measurement
	NoSpin   bool            // ONNX Runtime's idle threads sleep (in the server's session and the bare backbone's alike)
}

// Serve measures flycl's server on loopback in this process and prints
// the table to out: single-image predict latency next to the bare
// backbone, feature-vector predicts per second with each number of
// clients, and predict latency while learns run (see "flycl-lab bench serve
// --help").
func Serve(ctx context.Context, out io.Writer, o ServeOptions) error {
	files, bb, cfg, n, clients, learns, dur, noSpin := o.Images, o.Backbone, o.Config, o.N, o.Clients, o.Learns, o.Duration, o.NoSpin
	spec := o.Spec
	if len(clients) == 0 || slices.Min(clients) < 1 {
		return fmt.Errorf("bench: clients %v: want one or more counts >= 1", clients)
	}
	if len(files) < 40 {
		return fmt.Errorf("bench: need at least 40 JPEG files, got %d", len(files))
	}
	ex, err := servedExtractor(bb, !noSpin)
	if err != nil {
		return err
	}
	defer ex.Close()
	raw := make([][]byte, len(files))
	for i, f := range files {
		if raw[i], err = os.ReadFile(f); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "flycl-lab bench serve: %s (d=%d), m=%d p=%d k=%d, %d CPUs, GOMAXPROCS %d, ONNX Runtime spinning %v, loopback\n",
		bb.Name, bb.Dim(), cfg.M, cfg.P, cfg.K, runtime.NumCPU(), runtime.GOMAXPROCS(0), !noSpin)

	// The bare backbone, one image at a time, in this process.
	var bare, runOnly []time.Duration
	per := 3 * bb.Size * bb.Size
	sess, err := bb.NewSessionWith(backbone.SessionOptions{NoSpin: noSpin})
	if err != nil {
		return err
	}
	defer sess.Close()
	var bareCPU time.Duration
	for i := range n + 3 {
		if i == 3 {
			bareCPU = proctime.CPU()
		}
		t := time.Now()
		img, err := imageio.Decode(raw[i%len(raw)])
		if err != nil {
			return fmt.Errorf("%s: %w", files[i%len(raw)], err)
		}
		x := bb.Preset.Tensor(img, make([]float32, per))
		t1 := time.Now()
		if _, err := sess.Run(x, 1); err != nil {
			return err
		}
		if i >= 3 { // warm-up
			bare = append(bare, time.Since(t))
			runOnly = append(runOnly, time.Since(t1))
		}
	}
	bareCPU = (proctime.CPU() - bareCPU) / time.Duration(n)

	// The server, with a model of 10 classes learned from features.
	dirTmp, err := os.MkdirTemp("", "flycl-bench-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dirTmp)
	be, err := server.OpenFile(filepath.Join(dirTmp, "bench.flycl"), func() (*flycl.Model, error) { return flycl.New(cfg, bb.Dim()) })
	if err != nil {
		return err
	}
	if err := be.SetPipeline(mustPipeline(spec, bb)); err != nil {
		return err
	}
	srv, err := server.New(server.Config{Backend: be, Extractor: ex})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go srv.Serve(sctx, ln, server.DefaultTimeouts())
	url := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 5 * time.Minute}

	imgs := make([]*imageio.RGB, 40)
	for i := range imgs {
		if imgs[i], err = imageio.Decode(raw[i]); err != nil {
			return err
		}
	}
	feats, err := ex.Features(ctx, imgs)
	if err != nil {
		return err
	}
	d := bb.Dim()
	vec := func(i int) []float32 { return feats[i*d : (i+1)*d] }
	var x0 [][]float32
	var y0 []string
	for i := range 20 {
		x0 = append(x0, vec(i))
		y0 = append(y0, fmt.Sprintf("class%d", i/2))
	}
	t := time.Now()
	c := apipkg.NewClient(url, "")
	c.HTTP = client
	if _, err := c.Learn(ctx, apipkg.Request{Features: x0, Labels: y0}); err != nil {
		return err
	}
	firstLearn := time.Since(t)

	// 1. Single-image predicts.
	var single, srvTotal, srvExtract []time.Duration
	var singleCPU time.Duration
	for i := range n + 3 {
		if i == 3 {
			singleCPU = proctime.CPU()
		}
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		p, _ := w.CreateFormFile("image", filepath.Base(files[i%len(files)]))
		p.Write(raw[i%len(raw)])
		w.Close()
		t := time.Now()
		resp, err := client.Post(url+"/v1/predict", w.FormDataContentType(), &b)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		el := time.Since(t)
		if resp.StatusCode != 200 {
			return fmt.Errorf("predict: status %d: %s", resp.StatusCode, body)
		}
		var pr apipkg.PredictResponse
		if err := json.Unmarshal(body, &pr); err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		if i >= 3 {
			single = append(single, el)
			srvTotal = append(srvTotal, time.Duration(pr.Seconds*float64(time.Second)))
			srvExtract = append(srvExtract, time.Duration(pr.Extract*float64(time.Second)))
		}
	}
	singleCPU = (proctime.CPU() - singleCPU) / time.Duration(n)

	// 2. Feature predicts per second.
	bodies := make([][]byte, 40)
	for i := range bodies {
		bodies[i], _ = json.Marshal(apipkg.Request{Features: [][]float32{vec(i)}, Top: 5})
	}
	fire := func(clients int, stopAt time.Time, stopCh <-chan struct{}) (lat []time.Duration, fails int64) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		var failed atomic.Int64
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				for i := c; ; i++ {
					if stopCh != nil {
						select {
						case <-stopCh:
							goto done
						default:
						}
					} else if time.Now().After(stopAt) {
						break
					}
					t := time.Now()
					resp, err := client.Post(url+"/v1/predict", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
					if err != nil {
						failed.Add(1)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						failed.Add(1)
						continue
					}
					mine = append(mine, time.Since(t))
				}
			done:
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		return lat, failed.Load()
	}
	type rateRow struct {
		clients   int
		lat       []time.Duration
		fails     int64
		rate      float64
		cpuPerReq time.Duration
		perBatch  float64
	}
	var rates []rateRow
	for _, c := range clients {
		b0, err := batchStats(client, url)
		if err != nil {
			return err
		}
		cpu0 := proctime.CPU()
		t := time.Now()
		lat, fails := fire(c, time.Now().Add(dur), nil)
		row := rateRow{clients: c, lat: lat, fails: fails, rate: float64(len(lat)) / time.Since(t).Seconds(),
			cpuPerReq: (proctime.CPU() - cpu0) / time.Duration(max(len(lat), 1))}
		b1, err := batchStats(client, url)
		if err != nil {
			return err
		}
		row.perBatch = (b1.sum - b0.sum) / max(b1.count-b0.count, 1)
		rates = append(rates, row)
	}
	idle := rates[0].lat

	// 3. Feature predicts while learns run one after another.
	stopCh := make(chan struct{})
	var learnTimes []time.Duration
	var learnErr error
	go func() {
		defer close(stopCh)
		for l := range learns {
			var x [][]float32
			var y []string
			for i := 20; i < 40; i++ {
				x = append(x, vec(i))
				y = append(y, fmt.Sprintf("new%d-%d", l, (i-20)/4))
			}
			t := time.Now()
			if _, err := c.Learn(ctx, apipkg.Request{Features: x, Labels: y}); err != nil {
				learnErr = err
				return
			}
			learnTimes = append(learnTimes, time.Since(t))
		}
	}()
	busy, busyFails := fire(clients[0], time.Time{}, stopCh)
	if learnErr != nil {
		return learnErr
	}

	pct := func(d []time.Duration, q float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%8.2f ms", float64(d.Microseconds())/1000) }
	tw := &strings.Builder{}
	fmt.Fprintf(tw, "\n%-58s %11s %11s\n", "", "p50", "p99")
	fmt.Fprintf(tw, "%-58s %s %s\n", "bare backbone, one image (decode+preprocess+run)", ms(pct(bare, .5)), ms(pct(bare, .99)))
	fmt.Fprintf(tw, "%-58s %s %s\n", "bare backbone, run only", ms(pct(runOnly, .5)), ms(pct(runOnly, .99)))
	fmt.Fprintf(tw, "%-58s %s %s\n", "serve: single-image predict over HTTP", ms(pct(single, .5)), ms(pct(single, .99)))
	fmt.Fprintf(tw, "%-58s %8.2fx    %8.2fx   (target p50 <= 1.2x)\n", "  ratio serve / bare backbone (decode+preprocess+run)",
		pct(single, .5).Seconds()/pct(bare, .5).Seconds(), pct(single, .99).Seconds()/pct(bare, .99).Seconds())
	fmt.Fprintf(tw, "%-58s %8.2fx    %8.2fx\n", "  ratio serve / backbone run only",
		pct(single, .5).Seconds()/pct(runOnly, .5).Seconds(), pct(single, .99).Seconds()/pct(runOnly, .99).Seconds())
	fmt.Fprintf(tw, "%-58s %s %s\n", "  in the server: extract (decode+preprocess+run)", ms(pct(srvExtract, .5)), ms(pct(srvExtract, .99)))
	fmt.Fprintf(tw, "%-58s %s %s\n", "  in the server: whole predict (extract, W, top-k, scores)", ms(pct(srvTotal, .5)), ms(pct(srvTotal, .99)))
	fmt.Fprintf(tw, "  CPU per image (this process, all threads): bare backbone %.2f ms, serve predict %.2f ms (ONNX Runtime threads spinning count here)\n",
		float64(bareCPU.Microseconds())/1000, float64(singleCPU.Microseconds())/1000)
	fmt.Fprintf(tw, "\nfeature predicts (JSON, one vector per request, top 5), %.1f s per row   (target >= 2000/s on 2 cores)\n", dur.Seconds())
	fmt.Fprintf(tw, "%8s %12s %11s %11s %14s %15s %8s\n", "clients", "requests/s", "p50", "p99", "CPU/request", "requests/batch", "failed")
	for _, r := range rates {
		fmt.Fprintf(tw, "%8d %12.0f %s %s %11.3f ms %15.2f %8d\n", r.clients, r.rate, ms(pct(r.lat, .5)), ms(pct(r.lat, .99)),
			float64(r.cpuPerReq.Microseconds())/1000, r.perBatch, r.fails)
	}
	fmt.Fprintf(tw, "(CPU/request: this process's CPU time, server and clients, per answered request: %d CPUs sustain at most %d/CPU-per-request when CPU-bound)\n",
		runtime.NumCPU(), runtime.NumCPU())
	fmt.Fprintf(tw, "%-58s %s %s\n", fmt.Sprintf("feature predict, idle (%d clients)", clients[0]), ms(pct(idle, .5)), ms(pct(idle, .99)))
	fmt.Fprintf(tw, "%-58s %s %s\n", fmt.Sprintf("feature predict, during %d learns (%d clients)", learns, clients[0]), ms(pct(busy, .5)), ms(pct(busy, .99)))
	fmt.Fprintf(tw, "%-58s %8.2fx    %8.2fx\n", "  ratio during learns / idle",
		pct(busy, .5).Seconds()/pct(idle, .5).Seconds(), pct(busy, .99).Seconds()/pct(idle, .99).Seconds())
	fmt.Fprintf(tw, "predicts during learns: %d answered, %d failed   (target: 0 failed)\n", len(busy), busyFails)
	var lt []string
	for _, d := range learnTimes {
		lt = append(lt, fmt.Sprintf("%.2f s", d.Seconds()))
	}
	fmt.Fprintf(tw, "learn of 20 feature vectors (incl. durable save): first %.2f s; during predicts %s\n", firstLearn.Seconds(), strings.Join(lt, ", "))
	fmt.Fprint(out, tw.String())
	stop()
	return nil
}

// batchTotals are the server's flycl_predict_batch_requests histogram's sum
// (requests) and count (batches).
type batchTotals struct{ sum, count float64 }

func batchStats(c *http.Client, url string) (batchTotals, error) {
	resp, err := c.Get(url + "/metrics")
	if err != nil {
		return batchTotals{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return batchTotals{}, err
	}
	var t batchTotals
	for _, line := range strings.Split(string(b), "\n") {
		var v float64
		if _, err := fmt.Sscanf(line, "flycl_predict_batch_requests_sum %g", &v); err == nil {
			t.sum = v
		}
		if _, err := fmt.Sscanf(line, "flycl_predict_batch_requests_count %g", &v); err == nil {
			t.count = v
		}
	}
	return t, nil
}

// servedExtractor compiles bb's features with its own preset as flycl
// serve does (server.ExtractBatch images a batch; spin: --ort-spin).
func servedExtractor(bb *backbone.Model, spin bool) (*extract.Extractor, error) {
	ex, err := extract.NewExtractor(bb, "", "features", nil)
	if err != nil {
		return nil, err
	}
	ex.BatchSize, ex.Spin = server.ExtractBatch, spin
	return ex, ex.Open()
}

// mustPipeline describes the backbone with its own output and preset.
func mustPipeline(spec string, bb *backbone.Model) *modelfile.Pipeline {
	de, err := extract.NewExtractor(bb, spec, "", nil)
	if err != nil {
		panic(err) // "features" is every backbone's output
	}
	return de.Pipeline()
}
