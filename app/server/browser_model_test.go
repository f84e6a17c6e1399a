package server

import (
	"context"
	"fmt"
	"image/color"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flycl/flycl"
)

// TestBrowserForgetUndoHistory drives the page's model controls in
// headless Chromium against a real in-process server (a model file with
// its journal, the grid-mean stand-in backbone, no inbox). The research
// settings (λ, online mini-batches) sit in a closed "advanced" fold. A
// person teaches red, blue and green pictures; the history lists the
// three learns, newest first, and the undo button names the last one; an
// undo takes green back and the page says so (the server's answer: the
// version and the learn it took back), greys its row and drops the class;
// a forget of blue needs a second click and then leaves only red, the
// page saying whether the server forgot exactly. The rejection state is
// what GET /v1/model says. The page never asks for the inbox (the server
// has none). The same file served read-only (ReadOnlyBackend): its page
// says so and shows no teach, forget or undo control, but the classes
// and the history of the file.
func TestBrowserForgetUndoHistory(t *testing.T) {
	ctx := newBrowser(t, 1100, 1000)
	dir := t.TempDir()
	// the model file as flycl serve opens it: with its journal
	// (--checkpoint-every 16), which the history and undo read
	fb, err := OpenFileWith(context.Background(), filepath.Join(dir, "cam.flycl"), FileOptions{
		Create:      func() (*flycl.Model, error) { return flycl.New(testConfig(), testDim) },
		Checkpoints: Checkpoints{Entries: 16, Bytes: 256 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	s, err := New(Config{Backend: fb, Extractor: gridExtractor{},
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var inboxAsked atomic.Int64
	h := s.Handler()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/inbox") {
			inboxAsked.Add(1)
		}
		h.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String()

	pictures := func(name string, c color.RGBA, n int, seed uint64) []string {
		var out []string
		for i := range n {
			p := filepath.Join(dir, fmt.Sprintf("%s%d.png", name, i))
			if err := os.WriteFile(p, pngOf(t, 64, 48, c, seed+uint64(i)), 0o644); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		return out
	}
	reds := pictures("red", color.RGBA{210, 40, 30, 255}, 3, 1)
	blues := pictures("blue", color.RGBA{30, 50, 200, 255}, 3, 11)
	greens := pictures("green", color.RGBA{40, 190, 50, 255}, 2, 21)

	// Each wait is bounded (generously: the page answers in well under
	// a second), so that a step that never completes names itself.
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(30*time.Second))
	}
	eval := func(js string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](js) }
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			st, serr := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent + " | " + document.getElementById("modelstatus").textContent + " | history rows " + document.querySelectorAll("#history tr").length + " | " + document.getElementById("nohistory").textContent`))
			t.Fatalf("%s: %v (page status %q %v)", name, err, st, serr)
		}
	}
	js := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	text := func(id string) string { return js(`document.getElementById("` + id + `").textContent`) }
	teach := func(label string, files []string, version int) {
		t.Helper()
		step("teach "+label,
			chromedp.SetUploadFiles(chromedp.CSS("#files"), files),
			chromedp.WaitEnabled(chromedp.CSS("#teach")),
			chromedp.SetValue(chromedp.CSS("#label"), label),
			eval(`document.getElementById("teach").click()`),
			poll(`document.getElementById("status").textContent.startsWith("learned") && document.getElementById("status").textContent.includes("'`+label+`'")`),
			poll(fmt.Sprintf(`document.querySelectorAll("#history tr").length === %d`, version)))
	}
	classes := func() []string {
		var cr ClassesResponse
		if code, _, b := do(t, "GET", base+"/v1/classes", "", nil, "", &cr); code != http.StatusOK {
			t.Fatalf("classes: %d %s", code, b)
		}
		var out []string
		for _, c := range cr.Classes {
			out = append(out, c.Name)
		}
		return out
	}

	step("open the page",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#drop")),
		poll(`document.getElementById("version").textContent === "0"`),
		poll(`document.getElementById("undo").textContent === "Nothing to undo"`))
	// the fold is closed: λ and the online controls are not on screen
	if js(`String(document.getElementById("advanced").open)`) != "false" || js(`String(document.getElementById("lambda").checkVisibility())`) != "false" {
		t.Fatalf("the advanced fold is open on a fresh page, or λ shows outside it: open %s, λ rects %s", js(`String(document.getElementById("advanced").open)`), js(`String(document.getElementById("lambda").checkVisibility())`))
	}
	if got := text("unknownoff"); got != "Off until the first learn." {
		t.Errorf("a new model's rejection state reads %q", got)
	}
	teach("red", reds, 1)
	teach("blue", blues, 2)
	teach("green", greens, 3)
	if got, want := text("undo"), "Undo v3: learn of green (2 photos)"; got != want {
		t.Fatalf("undo button %q, want %q", got, want)
	}
	rows := js(`[...document.querySelectorAll("#history tr")].map((r) => r.cells[0].textContent + " " + r.cells[1].textContent).join("|")`)
	if want := "v3 learn of green (2 photos)|v2 learn of blue (3 photos)|v1 learn of red (3 photos)"; rows != want {
		t.Fatalf("history rows %q, want %q", rows, want)
	}
	if got := js(`document.querySelector('#classes li[data-name="red"] .taught').textContent`); got != "taught in v1" {
		t.Errorf("red's line says %q, want the learn that taught it (v1)", got)
	}

	// The rejection state: what GET /v1/model says, or off.
	var mr struct {
		Unknown *struct {
			Enabled    bool    `json:"enabled"`
			Threshold  float64 `json:"threshold"`
			Samples    int     `json:"samples"`
			Guaranteed float64 `json:"guaranteed"`
			Keep       float64 `json:"keep"`
		} `json:"unknown"`
		Inbox bool `json:"inbox"`
	}
	if code, _, b := do(t, "GET", base+"/v1/model", "", nil, "", &mr); code != http.StatusOK || mr.Inbox {
		t.Fatalf("model: %d %s (want inbox false)", code, b)
	}
	if u := mr.Unknown; u != nil && u.Enabled {
		t.Logf("rejection on: threshold %.4g, %d samples, guaranteed %g", u.Threshold, u.Samples, u.Guaranteed)
		if got, want := text("unkthreshold"), fmt.Sprintf("%.3f", u.Threshold); got != want {
			t.Errorf("page threshold %q, /v1/model %q", got, want)
		}
		if got, want := text("unksamples"), fmt.Sprintf("%d leave-one-out scores", u.Samples); got != want {
			t.Errorf("page pool %q, want %q", got, want)
		}
		pct := func(v float64) string { return strconv.FormatFloat(math.Round(1000*v)/10, 'f', -1, 64) + "%" }
		if got, want := text("unkkeep"), "≥ "+pct(u.Guaranteed)+" of new photos of these classes (asked "+pct(u.Keep)+")"; got != want {
			t.Errorf("page keep %q, want %q", got, want)
		}
	} else if got := text("unknownoff"); !strings.HasPrefix(got, "Off: every answer is one of the classes.") || js(`String(document.getElementById("unknownstate").hidden)`) != "true" {
		t.Errorf("rejection off in /v1/model, the page shows %q", got)
	}

	step("undo",
		eval(`document.getElementById("undo").click()`),
		poll(`document.getElementById("modelstatus").textContent.startsWith("undid")`),
		poll(`document.getElementById("version").textContent === "4"`),
		poll(`document.querySelectorAll("#history tr").length === 4`))
	if got, want := text("modelstatus"), "undid v3 (learn of green (2 photos)) · now version 4, 2 class(es)"; got != want {
		t.Fatalf("after the undo the page says %q, want %q", got, want)
	}
	if got := classes(); !slices.Equal(got, []string{"red", "blue"}) {
		t.Fatalf("classes after the undo: %v", got)
	}
	if js(`String(document.querySelector('#classes li[data-name="green"]') === null)`) != "true" {
		t.Fatal("the page still lists green after the undo")
	}
	if got := js(`document.querySelector("#history tr").cells[1].textContent + "|" + document.querySelectorAll("#history tr")[1].className`); got != "undo of v3 (green)|undone" {
		t.Fatalf("history after the undo: newest row and the undone learn's class %q", got)
	}
	if got, want := text("undo"), "Undo v2: learn of blue (3 photos)"; got != want {
		t.Fatalf("undo button after one undo %q, want %q", got, want)
	}

	// forget asks first: one click changes nothing
	step("ask to forget blue",
		eval(`document.querySelector('#classes li[data-name="blue"] button.forget').click()`),
		poll(`document.querySelector('#classes li[data-name="blue"] button.forget').textContent === "forget blue?"`))
	if got := classes(); !slices.Equal(got, []string{"red", "blue"}) {
		t.Fatalf("one click on forget changed the classes: %v", got)
	}
	step("forget blue",
		eval(`document.querySelector('#classes li[data-name="blue"] button.forget').click()`),
		poll(`document.getElementById("modelstatus").textContent.startsWith("forgot")`),
		poll(`document.getElementById("version").textContent === "5"`),
		poll(`document.querySelector('#classes li[data-name="blue"]') === null`))
	if got := classes(); !slices.Equal(got, []string{"red"}) {
		t.Fatalf("classes after forgetting blue: %v", got)
	}
	st := text("modelstatus")
	if !strings.HasPrefix(st, "forgot 'blue' exactly: the model is now one that never learned it · version 5") &&
		!strings.HasPrefix(st, "forgot 'blue' (not exact: only its column was dropped") {
		t.Fatalf("after the forget the page says %q", st)
	}
	var hr HistoryResponse
	if code, _, b := do(t, "GET", base+"/v1/model/history", "", nil, "", &hr); code != http.StatusOK || len(hr.Changes) != 5 || hr.Changes[4].Op != "forget" {
		t.Fatalf("history after the forget: %d %s", code, b)
	}
	step("the history shows the forget", poll(`document.querySelector("#history tr").cells[1].textContent.startsWith("forget of blue")`))

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(t.TempDir(), "model.png")
	if d := os.Getenv("FLYCL_SHOT_DIR"); d != "" {
		shot = filepath.Join(d, "model.png")
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", shot)
	if n := inboxAsked.Load(); n != 0 {
		t.Fatalf("the page asked for the inbox %d times; the server has none", n)
	}

	// the same file served read-only (flycl serve --read-only): the page
	// says so and shows no control that changes the model (teach, the
	// advanced fold, forget, undo), while it still lists the classes and
	// the history; the writer's page shows every control and no such line
	if js(`String(document.getElementById("readonly").checkVisibility())`) != "false" ||
		js(`String(document.getElementById("teach").checkVisibility() && document.getElementById("undo").checkVisibility())`) != "true" {
		t.Fatal("the writing server's page shows the read-only line or hides teach or undo")
	}
	ro, err := OpenReadOnly(filepath.Join(dir, "cam.flycl"), ReadOnlyOptions{Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rs, err := New(Config{Backend: ro, Extractor: gridExtractor{}, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	rln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rhs := &http.Server{Handler: rs.Handler()}
	go rhs.Serve(rln)
	defer rhs.Close()
	step("open the read-only server's page",
		chromedp.Navigate("http://"+rln.Addr().String()+"/"),
		chromedp.WaitVisible(chromedp.CSS("#drop")),
		poll(`document.getElementById("version").textContent === "5"`),
		poll(`document.querySelector('#classes li[data-name="red"]') !== null`),
		poll(`document.getElementById("readonly").checkVisibility()`))
	if got := text("readonly"); !strings.HasPrefix(got, "read-only") {
		t.Fatalf("the read-only line says %q", got)
	}
	for _, id := range []string{"teach", "label", "advanced", "undo"} {
		if js(`String(document.getElementById("`+id+`").checkVisibility())`) != "false" {
			t.Errorf("the read-only server's page shows #%s", id)
		}
	}
	if n := js(`String(document.querySelectorAll("#classes button").length)`); n != "0" {
		t.Errorf("the read-only server's page shows %s forget button(s)", n)
	}
	if n := js(`String(document.querySelectorAll("#history tr").length)`); n != "5" {
		t.Errorf("the read-only server's page lists %s changes, want the 5 of the file", n)
	}
	if js(`String(document.getElementById("classify").checkVisibility())`) != "true" {
		t.Error("the read-only server's page hides classify")
	}
}
