package server

import (
	"image/color"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/flycl/flycl/app/inbox"
)

// TestBrowserInbox drives the page's inbox in headless Chromium: a model
// taught red and blue pictures (the grid-mean stand-in backbone) is asked
// about three green ones, which land in the inbox; the page lists them as
// thumbnails with the model's guess, a person selects two, types "green"
// and presses Learn; the model then has the class green (two samples),
// the inbox holds only the third picture, and the page classifies that
// third picture as green. FLYCL_REQUIRE_BROWSER=1 makes a missing
// Chromium a failure, as for TestBrowser.
func TestBrowserInbox(t *testing.T) {
	ctx := newBrowser(t, 1100, 1000)
	dir := t.TempDir()
	ib, err := inbox.Open(filepath.Join(dir, "inbox"), inbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	// Rejection off and a policy that keeps every prediction less than
	// certain: which pictures are kept is then the test's choice, not the
	// calibration's (TestInboxKeepsDoubtful tests the default policy).
	s, err := New(Config{Backend: newFileBackend(t, filepath.Join(dir, "cam.flycl")), Extractor: gridExtractor{}, Unknown: "off",
		Inbox: ib, InboxPolicy: inbox.Policy{Probability: 0.999, Margin: 10}, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
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

	// red and blue, taught through the API
	red, blue, green := color.RGBA{210, 40, 30, 255}, color.RGBA{30, 50, 200, 255}, color.RGBA{40, 190, 50, 255}
	for i, c := range []color.RGBA{red, blue} {
		imgs := [][]byte{pngOf(t, 64, 48, c, uint64(10*i+1)), pngOf(t, 64, 48, c, uint64(10*i+2)), pngOf(t, 64, 48, c, uint64(10*i+3))}
		ct, body := multipartBody(t, imgs, map[string]string{"label": []string{"red", "blue"}[i]})
		if code, _, b := do(t, "POST", base+"/v1/learn", ct, body, "", nil); code != http.StatusOK {
			t.Fatalf("teach: %d %s", code, b)
		}
	}
	var greens []string
	for i := range 3 {
		p := filepath.Join(dir, "green"+strconv.Itoa(i)+".png")
		if err := os.WriteFile(p, pngOf(t, 320, 240, green, uint64(100+i)), 0o644); err != nil {
			t.Fatal(err)
		}
		greens = append(greens, p)
	}

	// No time limits of its own: a step that never completes fails at go
	// test's -timeout.
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(0))
	}
	eval := func(js string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](js) }
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			st, serr := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent + " | " + document.getElementById("inboxstatus").textContent`))
			t.Fatalf("%s: %v (page status %q %v)", name, err, st, serr)
		}
	}
	step("open the page",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#drop")),
		poll(`document.getElementById("version").textContent === "2"`),
		poll(`!document.getElementById("inbox").hidden && document.getElementById("inboxcount").textContent === "(0)"`))
	step("classify three green pictures",
		chromedp.SetUploadFiles(chromedp.CSS("#files"), greens),
		chromedp.WaitEnabled(chromedp.CSS("#classify")),
		eval(`document.getElementById("classify").click()`),
		poll(`document.querySelectorAll("#result .top1").length === 3`))
	s.flushInbox() // the keeper has stored them
	if n, _ := ib.Len(); n != 3 {
		t.Fatalf("%d of the 3 green pictures were kept (the policy keeps every prediction below 99.9%%)", n)
	}
	items := ib.List() // newest first: green2, green1, green0
	step("list the inbox",
		eval(`document.getElementById("inboxrefresh").click()`),
		poll(`document.querySelectorAll("#inboxlist .inboxitem").length === 3`),
		// every thumbnail loaded (fetched with the page's headers)
		poll(`[...document.querySelectorAll("#inboxlist .inboxitem img")].every((i) => i.complete && i.naturalWidth === 256 && i.naturalHeight === 192)`))
	guesses, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#inboxlist .inboxitem .guess")].map((g) => g.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		if guesses[i] != it.Guess || (it.Guess != "red" && it.Guess != "blue") {
			t.Fatalf("the page shows guesses %q, the inbox holds %q at %d", guesses, it.Guess, i)
		}
	}
	// select the two oldest (green0 and green1), label them, learn
	pickIDs := []string{items[2].ID, items[1].ID}
	sel := func(id string) string {
		return `document.querySelector('#inboxlist .inboxitem[data-id="` + id + `"]').click()`
	}
	step("select two and learn them as green",
		eval(sel(pickIDs[0])), eval(sel(pickIDs[1])),
		chromedp.WaitEnabled(chromedp.CSS("#inboxlearn")),
		chromedp.SetValue(chromedp.CSS("#inboxlabel"), "green"),
		eval(`document.getElementById("inboxlearn").click()`),
		poll(`document.getElementById("inboxstatus").textContent.startsWith("learned 2 item(s) as 'green' (new class)")`),
		poll(`document.querySelectorAll("#inboxlist .inboxitem").length === 1`),
		poll(`document.getElementById("version").textContent === "3"`))
	left := ib.List()
	if len(left) != 1 || left[0].ID != items[0].ID {
		t.Fatalf("the inbox holds %+v after the learn, want only %s", left, items[0].ID)
	}
	var cr ClassesResponse
	do(t, "GET", base+"/v1/classes", "", nil, "", &cr)
	if !slices.Contains(cr.Classes, Class{Name: "green", Samples: 2}) {
		t.Fatalf("classes after the inbox learn: %+v, want green with 2 samples", cr.Classes)
	}
	step("classify the third green picture",
		chromedp.SetUploadFiles(chromedp.CSS("#files"), greens[2:]),
		eval(`document.getElementById("result").replaceChildren()`),
		eval(`document.getElementById("classify").click()`),
		poll(`document.querySelectorAll("#result .top1").length === 1`))
	top1, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#result .top1")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(top1) != "green" {
		t.Fatalf("the page classifies the third green picture as %q, want green", top1)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		shot := filepath.Join(t.TempDir(), "inbox.png")
		if d := os.Getenv("FLYCL_SHOT_DIR"); d != "" {
			shot = filepath.Join(d, "inbox.png")
		}
		if os.Getenv("FLYCL_SCREENSHOT") == "1" {
			shot = filepath.Join("..", "..", "docs", "serve-inbox.png")
		}
		os.WriteFile(shot, png, 0o644)
		t.Logf("screenshot %s", shot)
	}
}
