package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tinyModule writes a module whose tests pass, skip with a reason, skip a
// subtest, and (with fail) fail, and returns its folder.
func tinyModule(t *testing.T, fail bool) string {
	t.Helper()
	dir := t.TempDir()
	src := `package tiny

import "testing"

func TestPass(t *testing.T) {}

func TestSkip(t *testing.T) { t.Skip("no widget: set WIDGET=1") }

func TestSub(t *testing.T) {
	t.Run("a", func(t *testing.T) {})
	t.Run("b", func(t *testing.T) { t.Skipf("b needs %s", "a gadget") })
}
`
	if fail {
		src += "\nfunc TestFail(t *testing.T) { t.Log(\"context line\"); t.Error(\"boom\") }\n"
	}
	for name, data := range map[string]string{"go.mod": "module tiny\n\ngo 1.22\n", "tiny_test.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goTestJSON runs the real go test -json on dir: the stream the filter reads
// comes from the go command itself, not from a hand-written fixture.
func goTestJSON(t *testing.T, dir string) []byte {
	t.Helper()
	cmd := exec.Command("go", "test", "-json", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, _ := cmd.Output() // a failing test exits 1; the stream is what counts
	if len(out) == 0 {
		t.Fatalf("go test -json printed nothing in %s", dir)
	}
	return out
}

func TestFilterPassingRun(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	var w bytes.Buffer
	skips, err := filter(&w, bytes.NewReader(goTestJSON(t, tinyModule(t, false))), "default")
	if err != nil {
		t.Fatal(err)
	}
	out := w.String()
	// What plain go test prints: one ok line, nothing per test.
	if !strings.HasPrefix(out, "ok  \ttiny\t") || strings.Count(out, "\n") != 1 {
		t.Errorf("output %q, want only the package's ok line", out)
	}
	want := map[string]string{"TestSkip": "no widget: set WIDGET=1", "TestSub/b": "b needs a gadget"}
	if len(skips) != len(want) {
		t.Fatalf("skips %+v, want %v", skips, want)
	}
	for _, s := range skips {
		if s.Package != "tiny" || s.Label != "default" || !strings.HasSuffix(s.Reason, want[s.Test]) {
			t.Errorf("skip %+v, want reason ending %q", s, want[s.Test])
		}
	}
}

func TestFilterFailingRun(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	var w bytes.Buffer
	if _, err := filter(&w, bytes.NewReader(goTestJSON(t, tinyModule(t, true))), ""); err != nil {
		t.Fatal(err)
	}
	out := w.String()
	for _, s := range []string{"--- FAIL: TestFail", "context line", "boom", "FAIL\ttiny"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	for _, s := range []string{"=== RUN", "--- PASS", "--- SKIP"} {
		if strings.Contains(out, s) {
			t.Errorf("output has %q, which plain go test does not print:\n%s", s, out)
		}
	}
}

// run passes the command's exit status on and logs the skips; report lists
// each skip once with the runs that skipped it.
func TestRunAndReport(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	log := filepath.Join(t.TempDir(), "skips.jsonl")
	pass, fail := tinyModule(t, false), tinyModule(t, true)
	for _, c := range []struct {
		dir, label string
		status     int
	}{{pass, "one", 0}, {pass, "two", 0}, {fail, "three", 1}} {
		wd, _ := os.Getwd()
		if err := os.Chdir(c.dir); err != nil {
			t.Fatal(err)
		}
		stdout := os.Stdout
		os.Stdout, _ = os.Open(os.DevNull)
		got := run([]string{"go", "test", "-json", "-count=1", "."}, log, c.label)
		os.Stdout.Close()
		os.Stdout = stdout
		os.Chdir(wd)
		if got != c.status {
			t.Errorf("%s: exit status %d, want %d", c.label, got, c.status)
		}
	}
	var w bytes.Buffer
	if err := report(&w, log); err != nil {
		t.Fatal(err)
	}
	out := w.String()
	if !strings.HasPrefix(out, "skipped tests: 2 ") || strings.Count(out, "SKIP tiny TestSkip [one; two; three]") != 1 ||
		!strings.Contains(out, "no widget: set WIDGET=1") || !strings.Contains(out, "SKIP tiny TestSub/b") {
		t.Errorf("report:\n%s", out)
	}
	w.Reset()
	if err := report(&w, filepath.Join(t.TempDir(), "none")); err != nil || w.String() != "skipped tests: none\n" {
		t.Errorf("report of no log: %v %q", err, w.String())
	}
}

// FuzzFilter: any stream (JSON events, broken JSON, plain lines) is
// filtered without a panic, and every skip it reports names a test.
func FuzzFilter(f *testing.F) {
	f.Add([]byte(`{"Action":"run","Package":"p","Test":"T"}
{"Action":"output","Package":"p","Test":"T","Output":"    x_test.go:1: why\n"}
{"Action":"skip","Package":"p","Test":"T"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
`))
	f.Add([]byte("{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T\"}\nnot json\n{\"Action\":"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var w bytes.Buffer
		skips, _ := filter(&w, bytes.NewReader(data), "l")
		for _, s := range skips {
			if s.Test == "" || s.Reason == "" {
				t.Errorf("skip %+v without a test or reason", s)
			}
		}
	})
}
