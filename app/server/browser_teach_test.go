package server

import (
	"context"
	"image/color"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/vision/imageio"
)

// TestBrowserTeach drives labelling from a stream and "have I taught it
// enough?" in headless Chromium. A model is taught red and blue
// pictures through the API; a flycl watch sharing the inbox folder has
// kept green crops of camera "drive", zones "gate" and "porch" (added
// here through a second Inbox of the folder, as watch's process does).
// The page shows them in one group per camera and zone, and the teach
// section lists red and blue (each taught with one picture in between,
// which the model gets wrong when left out) with the report's numbers
// and confusions (the same as GET
// /v1/teach, itself teach.Compute on the model and its journal: tested
// against brute force in package teach). A person selects the gate's
// crops, labels them green and learns them; the teach section then lists
// green too, with its photos counted. FLYCL_REQUIRE_BROWSER=1 makes a
// missing Chromium a failure, as for TestBrowser.
func TestBrowserTeach(t *testing.T) {
	ctx := newBrowser(t, 1100, 1100)
	dir := t.TempDir()
	ib, err := inbox.Open(filepath.Join(dir, "inbox"), inbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	// a journal, as flycl serve keeps by default: the report's samples
	be, err := OpenFileWith(context.Background(), filepath.Join(dir, "cam.flycl"), FileOptions{Checkpoints: Checkpoints{Entries: 16},
		Create: func() (*flycl.Model, error) { return flycl.New(testConfig(), testDim) }})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	s, err := New(Config{Backend: be, Extractor: gridExtractor{}, Unknown: "off",
		Inbox: ib, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
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
	base := "http://" + ln.Addr().String()

	// five of each colour, and one of each in between: those two are the
	// ones the model gets wrong when they are left out
	red, blue := color.RGBA{210, 40, 30, 255}, color.RGBA{30, 50, 200, 255}
	between := []color.RGBA{{140, 45, 130, 255}, {110, 45, 140, 255}}
	for i, c := range []color.RGBA{red, blue} {
		var imgs [][]byte
		for k := range 5 {
			imgs = append(imgs, pngOf(t, 64, 48, c, uint64(10*i+k+1)))
		}
		imgs = append(imgs, pngOf(t, 64, 48, between[i], uint64(10*i+9)))
		ct, body := multipartBody(t, imgs, map[string]string{"label": []string{"red", "blue"}[i]})
		if code, _, b := do(t, "POST", base+"/v1/learn", ct, body, "", nil); code != http.StatusOK {
			t.Fatalf("teach: %d %s", code, b)
		}
	}
	// watch's process: its own Inbox of the folder
	wb, err := inbox.Open(ib.Dir(), inbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	dec := imageio.Decoder{}
	for i, zone := range []string{"gate", "gate", "gate", "porch"} {
		im, err := dec.Decode(pngOf(t, 96, 72, color.RGBA{40, 190, 50, 255}, uint64(200+i)))
		if err != nil {
			t.Fatal(err)
		}
		x, _ := gridExtractor{}.Features(context.Background(), []*imageio.RGB{im})
		if _, _, err := wb.Add(inbox.Entry{ModelVersion: 2, Guess: "red", Why: inbox.Change, Top: []inbox.Score{{Class: "red", Score: 0.4}},
			Image: im, Features: x, Camera: "drive", Zone: zone}); err != nil {
			t.Fatal(err)
		}
	}

	var want TeachResponse
	if code, _, b := do(t, "GET", base+"/v1/teach", "", nil, "", &want); code != http.StatusOK {
		t.Fatalf("GET /v1/teach: %d %s", code, b)
	}
	if len(want.Classes) != 2 || want.Samples != 12 {
		t.Fatalf("teach report %+v: want red and blue, 12 photos", want.Report)
	}
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(0))
	}
	eval := func(js string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](js) }
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			st, serr := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("inboxstatus").textContent + " | " + document.getElementById("teachsummary").textContent`))
			t.Fatalf("%s: %v (page status %q %v)", name, err, st, serr)
		}
	}
	row := func(class, cell string) string {
		return `(document.querySelector('#teachtable tr[data-class="` + class + `"] td.` + cell + `') || {}).textContent`
	}
	pctOf := func(v float64) string { return `"` + teachPct(v) + `"` }
	step("open the page",
		chromedp.Navigate(base+"/"),
		poll(`document.getElementById("version").textContent === "2"`),
		poll(`!document.getElementById("teachsec").hidden && document.querySelectorAll("#teachtable tr[data-class]").length === 2`),
		poll(row("red", "acc")+` === `+pctOf(want.Classes[0].Accuracy)+` && `+row("blue", "acc")+` === `+pctOf(want.Classes[1].Accuracy)),
		poll(`document.querySelectorAll("#teachconf li").length === `+strconv.Itoa(len(want.Confusions))),
		poll(`document.querySelectorAll("#inboxlist .inboxitem").length === 4`),
		poll(`[...document.querySelectorAll("#inboxlist .inboxgroup")].map((g) => g.dataset.camera + "/" + g.dataset.zone + ":" + g.querySelectorAll(".inboxitem").length).join(" ") === "drive/gate:3 drive/porch:1"`),
		poll(`[...document.querySelectorAll("#inboxlist .inboxitem img")].every((i) => i.complete && i.naturalWidth > 0)`))
	step("learn the gate's crops as green",
		eval(`for (const d of document.querySelectorAll('#inboxlist .inboxgroup[data-zone="gate"] .inboxitem')) d.click()`),
		chromedp.WaitEnabled(chromedp.CSS("#inboxlearn")),
		chromedp.SetValue(chromedp.CSS("#inboxlabel"), "green"),
		eval(`document.getElementById("inboxlearn").click()`),
		poll(`document.getElementById("inboxstatus").textContent.startsWith("learned 3 item(s) as 'green' (new class)")`),
		poll(`document.querySelectorAll("#inboxlist .inboxitem").length === 1`),
		poll(`document.querySelectorAll("#teachtable tr[data-class]").length === 3`))
	var after TeachResponse
	if code, _, b := do(t, "GET", base+"/v1/teach", "", nil, "", &after); code != http.StatusOK {
		t.Fatalf("GET /v1/teach: %d %s", code, b)
	}
	if after.Version != 3 || after.Samples != 15 || after.Seconds != 0 {
		t.Fatalf("after the learn: version %d, %d photos, %g s; want version 3, 15 photos, the page's report reused (0 s)", after.Version, after.Samples, after.Seconds)
	}
	green := after.Classes[2]
	if green.Name != "green" || green.Samples != 3 || green.Scored != 3 {
		t.Fatalf("green in the report: %+v", green)
	}
	step("the page shows green's numbers",
		poll(row("green", "acc")+` === `+pctOf(green.Accuracy)),
		poll(`document.querySelector('#teachtable tr[data-class="green"] td:nth-child(2)').textContent === "3"`),
		poll(`document.querySelector('#teachtable tr[data-class="green"] td:last-child').textContent === "`+map[bool]string{true: "more photos", false: "enough"}[green.NeedsMore]+`"`))
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		shot := filepath.Join(t.TempDir(), "teach.png")
		if d := os.Getenv("FLYCL_SHOT_DIR"); d != "" {
			shot = filepath.Join(d, "teach.png")
		}
		if os.Getenv("FLYCL_SCREENSHOT") == "1" {
			shot = filepath.Join("..", "..", "docs", "serve-teach.png")
		}
		os.WriteFile(shot, png, 0o644)
		t.Logf("screenshot %s", shot)
	}
}

// teachPct formats a share as the page does ((100·v).toFixed(0) + "%":
// half up).
func teachPct(v float64) string {
	return strconv.Itoa(int(math.Floor(100*v+0.5))) + "%"
}
