package server

import (
	"context"
	"fmt"
	"image/color"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/testimages"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

const shared = "../../../shared"

// testWriter sends the server's log to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// findChromium returns Debian's chromium (or another Chromium/Chrome).
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newBrowser starts headless Chromium for a test, with a window of w×h
// and any extra options, closed when the test ends. Without Chromium the
// test is skipped, or failed with FLYCL_REQUIRE_BROWSER=1 (CI, where the
// browser tests must run).
func newBrowser(t *testing.T, w, h int, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	chrome := findChromium()
	if chrome == "" {
		if os.Getenv("FLYCL_REQUIRE_BROWSER") == "1" {
			t.Fatal("chromium not found (FLYCL_REQUIRE_BROWSER=1)")
		}
		t.Skip("chromium not found: install Debian's chromium (apt-get install -y chromium) to run the browser tests (.ci/run does)")
	}
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(w, h),
	}, extra...)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// start the browser on ctx itself: cancelling the context of a first
	// run would close it
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	return ctx
}

// TestBrowser drives the web page in headless Chromium: it teaches "dog"
// from three dog photos and "bird" from three bird photos (ImageNet
// samples, SqueezeNet features; the birds with a fixed λ, online in
// mini-batches of 2, after the page has refused a negative λ), classifies
// a fourth dog photo, and checks the page names it a dog. Without the
// shared photos it does the same with drawn discs and stripes through the
// SqueezeNet weights built into flycl; without ONNX Runtime, with red and
// blue pictures and the grid-mean stand-in backbone, so the page is still
// tested in a real browser. The
// screenshot goes to the test's temporary directory, or to
// docs/serve.png with FLYCL_SCREENSHOT=1.
func TestBrowser(t *testing.T) {
	ctx := newBrowser(t, 1100, 820)
	fixture, cleanup := browserFixture(t)
	defer cleanup()
	s, err := New(Config{Backend: fixture.backend, Extractor: fixture.extractor, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s.Handler()}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/"
	classA, classB, want := fixture.names[0], fixture.names[1], fixture.names[0]
	teachA, teachB, query := fixture.a, fixture.b, fixture.query

	// No time limits of its own: a step that never completes fails at go
	// test's -timeout.
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(0))
	}
	// click presses a button from JavaScript, as a user's click would.
	click := func(id string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`document.getElementById("` + id + `").click()`)
	}
	// step runs actions, naming the step in errors.
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			st, serr := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
			t.Fatalf("%s: %v (page status %q %v)", name, err, st, serr)
		}
	}
	teach := func(label string, files []string) {
		t.Helper()
		step("pick "+label+" images", chromedp.SetUploadFiles(chromedp.CSS("#files"), files))
		step("type "+label,
			chromedp.WaitEnabled(chromedp.CSS("#teach")),
			chromedp.SetValue(chromedp.CSS("#label"), label),
			click("teach"))
		step("learn "+label, poll(`document.getElementById("status").textContent.startsWith("learned") &&
				document.getElementById("status").textContent.includes("'`+label+`'")`))
	}
	text := func(sel string) string {
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return v
	}
	shot := filepath.Join(t.TempDir(), "serve.png")
	if os.Getenv("FLYCL_SCREENSHOT") == "1" {
		shot = filepath.Join("..", "..", "docs", "serve.png")
	}
	step("open the page",
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("#drop")),
		poll(`document.getElementById("version").textContent === "0"`))
	teach(classA, teachA)
	if st := text("#status"); !strings.Contains(st, "(GCV)") || strings.Contains(st, "online") {
		t.Fatalf("the default learn shows %q, want λ by GCV and no online mini-batches", st)
	}
	// The research settings are in the "advanced" fold, closed until
	// opened.
	if open, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("advanced").open`)); err != nil || open {
		t.Fatalf("the advanced fold is open on a fresh page (%v)", err)
	}
	step("open the advanced fold",
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#advanced summary").click()`),
		poll(`document.getElementById("advanced").open && document.getElementById("lambda").checkVisibility()`))
	// A λ the page refuses before sending anything: the model stays at
	// version 1.
	step("type a bad λ",
		chromedp.SetUploadFiles(chromedp.CSS("#files"), teachB),
		chromedp.WaitEnabled(chromedp.CSS("#teach")),
		chromedp.SetValue(chromedp.CSS("#label"), classB),
		chromedp.SetValue(chromedp.CSS("#lambda"), "-3"),
		click("teach"),
		poll(`document.getElementById("status").textContent.startsWith("λ must be a positive number")`))
	if v := text("#version"); v != "1" {
		t.Fatalf("a refused λ changed the model: version %q", v)
	}
	// The second class with a fixed λ, online in mini-batches of 2: the
	// server reports that λ and ceil(3/2) = 2 solves, and the page says so.
	step("fix λ and learn online",
		chromedp.SetValue(chromedp.CSS("#lambda"), "1e6"),
		chromedp.SetValue(chromedp.CSS("#batch"), "2"),
		click("online"))
	teach(classB, teachB)
	status := text("#status")
	if !strings.Contains(status, "λ=1e+6 (fixed)") || !strings.Contains(status, "online, 2 mini-batch(es)") {
		t.Fatalf("the fixed-λ online learn shows %q, want λ=1e+6 (fixed) and 2 mini-batches", status)
	}
	if strings.Contains(status, "(GCV)") {
		t.Fatalf("status %q calls a fixed λ GCV's", status)
	}
	step("pick the query image", chromedp.SetUploadFiles(chromedp.CSS("#files"), query))
	step("classify",
		chromedp.WaitEnabled(chromedp.CSS("#classify")),
		click("classify"),
		poll(`document.querySelector("#result .top1") !== null`),
		poll(`document.getElementById("version").textContent === "3"`))
	// the history as GET /v1/model/history has it: its changes, or, for a
	// model without a journal, a line that says there is none
	var hr HistoryResponse
	if code, _, b := do(t, "GET", url+"v1/model/history", "", nil, "", &hr); code != http.StatusOK {
		t.Fatalf("history: %d %s", code, b)
	}
	if len(hr.Changes) == 0 {
		step("the page says the model keeps no history", poll(`document.getElementById("nohistory").textContent.startsWith("This model's changes are not recorded (no journal)") &&
				document.getElementById("undo").textContent === "Nothing to undo"`))
	} else {
		step("the page lists the history", poll(fmt.Sprintf(`document.querySelectorAll("#history tr").length === %d`, len(hr.Changes))))
	}
	top1, classes, version, learnt := text("#result .top1"), text("#classes"), text("#version"), text("#lastlearn")
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("last learn: %s; screenshot %s", status, shot)
	if top1 != want {
		t.Fatalf("the page classified %s as %q, want %s", filepath.Base(query[0]), top1, want)
	}
	// the calibrated confidence next to the answer (the model fitted its
	// temperature when it learned two classes), and how typical it is of
	// the photos learned
	if conf := text("#result .conf"); !strings.Contains(conf, "confidence ") || !strings.Contains(conf, "%") || !strings.Contains(conf, "typical") {
		t.Errorf("the page shows %q next to the answer, want the confidence", conf)
	}
	// versions: 1 after the first learn, 3 after the second (one per
	// online mini-batch)
	if version != "3" || !strings.Contains(classes, classA) || !strings.Contains(classes, classB) {
		t.Fatalf("page shows version %q and classes %q", version, classes)
	}
	if !strings.Contains(status, " s") || !strings.HasPrefix(learnt, "last learn: 3 image(s) of '"+classB+"' in ") {
		t.Fatalf("the page does not show the learn time: status %q, last learn %q", status, learnt)
	}
}

// fixture is a backend, a backbone and the images of the browser test.
type fixture struct {
	backend     Backend
	extractor   extract.Interface
	names       [2]string // the two classes; the query is of the first
	a, b, query []string  // absolute image paths
}

// browserFixture uses SqueezeNet (the shared weights, or without
// ../shared the same weights built into flycl) and ImageNet photos, or
// without ../shared pictures of discs and stripes the test draws; without
// ONNX Runtime, coloured pictures and gridExtractor.
func browserFixture(t *testing.T) (fixture, func()) {
	photos := filepath.Join(shared, "data", "imagenet-sample-500")
	bbDir := filepath.Join(shared, "models", "squeezenet1.1")
	lib := os.Getenv("FLYCL_ORT_LIB")
	if lib == "" {
		lib = "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
	}
	backbone.Init(lib) // a failure shows as ErrNoRuntime from Open
	open := func() (*backbone.Model, error) {
		if _, err := os.Stat(bbDir); err != nil {
			return extract.OpenBackboneFS("squeezenet", zoo.FS(), "built-in")
		}
		return extract.OpenBackbone("squeezenet:"+bbDir, "")
	}
	var reason string
	if bb, err := open(); err != nil {
		reason = err.Error()
	} else if ex, err := openExtractor(bb); err != nil {
		reason = err.Error()
	} else {
		// as flycl serve opens it: with its journal (--checkpoint-every 16)
		fb, err := OpenFileWith(context.Background(), filepath.Join(t.TempDir(), "cam.flycl"), FileOptions{
			Create: func() (*flycl.Model, error) {
				return flycl.New(flycl.Config{M: 2000, P: 64, K: 400}, bb.Dim())
			},
			Checkpoints: Checkpoints{Entries: 16, Bytes: 256 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		if err := fb.SetPipeline(pipelineOf(t, "squeezenet", bb)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(photos); err != nil {
			t.Logf("browser test on drawn pictures through SqueezeNet (shared ImageNet samples not available: %v)", err)
			dir := t.TempDir()
			r := rand.New(rand.NewPCG(3, 4))
			draw := func(pattern string, n int) []string {
				var out []string
				for i := range n {
					img, err := testimages.Draw(pattern, 96, r)
					if err != nil {
						t.Fatal(err)
					}
					b, err := testimages.Encode(img, "png")
					if err != nil {
						t.Fatal(err)
					}
					p := filepath.Join(dir, fmt.Sprintf("%s%d.png", pattern, len(out)+i))
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
					out = append(out, p)
				}
				return out
			}
			discs, stripes := draw("discs", 4), draw("stripes", 3)
			return fixture{backend: fb, extractor: ex, names: [2]string{"discs", "stripes"},
				a: discs[:3], b: stripes, query: discs[3:]}, func() { ex.Close() }
		}
		img := func(names ...string) []string {
			var out []string
			for _, n := range names {
				p, err := filepath.Abs(filepath.Join(photos, n+".JPEG")) // the browser needs absolute paths
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, p)
			}
			return out
		}
		return fixture{backend: fb, extractor: ex, names: [2]string{"dog", "bird"},
			a:     img("n02088364_beagle", "n02091134_whippet", "n02086646_Blenheim_spaniel"),
			b:     img("n01530575_brambling", "n01532829_house_finch", "n01537544_indigo_bunting"),
			query: img("n02088632_bluetick"),
		}, func() { ex.Close() }
	}
	t.Logf("browser test on coloured pictures and the grid-mean stand-in backbone (%s)", reason)
	dir := t.TempDir()
	write := func(name string, c color.RGBA, seed uint64) string {
		p := filepath.Join(dir, name+".png")
		if err := os.WriteFile(p, pngOf(t, 64, 48, c, seed), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	red, blue := color.RGBA{210, 40, 30, 255}, color.RGBA{30, 50, 200, 255}
	return fixture{backend: newFileBackend(t, filepath.Join(dir, "cam.flycl")), extractor: gridExtractor{}, names: [2]string{"red", "blue"},
		a:     []string{write("red1", red, 1), write("red2", red, 2), write("red3", red, 3)},
		b:     []string{write("blue1", blue, 4), write("blue2", blue, 5), write("blue3", blue, 6)},
		query: []string{write("red4", red, 7)},
	}, func() {}
}

// openExtractor compiles bb's features with its own preset, as flycl serve
// does (16 images a batch).
func openExtractor(bb *backbone.Model) (*extract.Extractor, error) {
	ex, err := extract.NewExtractor(bb, "squeezenet", "", nil)
	if err != nil {
		return nil, err
	}
	ex.BatchSize, ex.Spin = 16, true
	return ex, ex.Open()
}

// pipelineOf describes the backbone with its own output and preset.
func pipelineOf(t *testing.T, spec string, bb *backbone.Model) *modelfile.Pipeline {
	de, err := extract.NewExtractor(bb, spec, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return de.Pipeline()
}
