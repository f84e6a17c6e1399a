package server

import (
	"context"
	"fmt"
	"image/color"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flycl/flycl"
)

// TestBrowserLayout: at a 1280-pixel-wide window and at a phone's
// 390 pixels, with the teach report showing classes of long names, no
// box of the page is wider than its content area (each section's
// scrollWidth within its clientWidth, the page within the window), the
// research figures (d, m, the pool) sit in the header's closed "advanced"
// fold, and the rejection is stated in words (GET /v1/model's in_words).
// A screenshot of each width is kept in the test's folder (FLYCL_SHOT_DIR
// to keep them elsewhere).
func TestBrowserLayout(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			ctx := newBrowser(t, width, 900)
			dir := t.TempDir()
			// a journal, as flycl serve keeps by default: the teach report's samples
			be, err := OpenFileWith(context.Background(), filepath.Join(dir, "cam.flycl"), FileOptions{Checkpoints: Checkpoints{Entries: 16},
				Create: func() (*flycl.Model, error) { return flycl.New(testConfig(), testDim) }})
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			s, err := New(Config{Backend: be, Extractor: gridExtractor{}})
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
			names := []string{"delivery-van-of-the-neighbours-across-the-street", "red", "a_cat_that_sleeps_on_the_garden_wall_every_afternoon"}
			cols := []color.RGBA{{30, 50, 200, 255}, {210, 40, 30, 255}, {40, 190, 50, 255}}
			for i, name := range names {
				var imgs [][]byte
				for k := range 4 {
					imgs = append(imgs, pngOf(t, 64, 48, cols[i], uint64(10*i+k+1)))
				}
				ct, body := multipartBody(t, imgs, map[string]string{"label": name})
				if code, _, b := do(t, "POST", base+"/v1/learn", ct, body, "", nil); code != http.StatusOK {
					t.Fatalf("teach %s: %d %s", name, code, b)
				}
			}
			var mr ModelResponse
			if code, _, b := do(t, "GET", base+"/v1/model", "", nil, "", &mr); code != http.StatusOK {
				t.Fatalf("model: %d %s", code, b)
			}
			err = chromedp.Do(ctx,
				// a phone's width (headless Chromium keeps windows at least
				// 500 pixels wide: the viewport is emulated)
				chromedp.EmulateViewport(int64(width), 900),
				chromedp.Navigate(base),
				chromedp.Poll[chromedp.Void](`document.querySelectorAll("#teachtable tr").length === 4 && document.getElementById("research").textContent !== ""`, chromedp.WithPollingTimeout(90*time.Second)),
			)
			if err != nil {
				t.Fatal(err)
			}
			js := func(expr string) string {
				v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
				if err != nil {
					t.Fatalf("%s: %v", expr, err)
				}
				return v
			}
			over := js(`[...document.querySelectorAll("section, header, main > div")].filter((e) => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
				.map((e) => (e.id || e.tagName) + " " + e.scrollWidth + ">" + e.clientWidth).join(", ")`)
			if over != "" {
				t.Errorf("boxes wider than their content area at %d px: %s", width, over)
			}
			if page := js(`String(document.documentElement.scrollWidth) + " " + String(window.innerWidth)`); page != fmt.Sprintf("%d %d", width, width) {
				t.Errorf("the page is wider than the %d-pixel window: scrollWidth, innerWidth = %s", width, page)
			}
			if got := js(`document.getElementById("modelinfo").textContent`); got == "" || containsAny(got, "d=", "m=", "pool") {
				t.Errorf("the header shows research figures outside the fold: %q", got)
			}
			if got := js(`document.getElementById("researchfold").open + " " + document.getElementById("research").textContent`); got != fmt.Sprintf("false d=%d · m=%d · k=%d · p=%d · λ=%s · pool %d", mr.Dim, mr.M, mr.K, mr.P, js(`Number(`+fmt.Sprint(mr.Lambda)+`).toPrecision(3)`), mr.Unknown.Samples) {
				t.Errorf("the fold: %q", got)
			}
			if u := mr.Unknown; u != nil && u.Enabled && u.InWords != "" {
				want := string([]rune(u.InWords)[0]-'a'+'A') + u.InWords[1:] + "."
				if got := js(`document.getElementById("unkwords").textContent`); got != want {
					t.Errorf("the rejection in words: %q, want %q", got, want)
				}
			}
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err == nil {
				shot := filepath.Join(t.TempDir(), fmt.Sprintf("layout-%d.png", width))
				if d := os.Getenv("FLYCL_SHOT_DIR"); d != "" {
					shot = filepath.Join(d, fmt.Sprintf("layout-%d.png", width))
				}
				os.WriteFile(shot, png, 0o644)
				t.Logf("screenshot %s", shot)
			}
		})
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if len(x) > 0 && len(s) >= len(x) {
			for i := 0; i+len(x) <= len(s); i++ {
				if s[i:i+len(x)] == x {
					return true
				}
			}
		}
	}
	return false
}
