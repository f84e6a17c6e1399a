package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flycl/flycl/app/fetch"
)

// fetchCLI runs flycl with stdout and stderr captured.
func fetchCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	root := newRoot()
	root.SetOut(&o)
	root.SetErr(&e)
	root.SetArgs(args)
	err = root.Execute()
	return o.String(), e.String(), err
}

// weightsServer serves body at any path on 127.0.0.1 and counts requests.
func weightsServer(t *testing.T, body *atomic.Pointer[[]byte]) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.ServeContent(w, r, "model.safetensors", time.Time{}, bytes.NewReader(*body.Load()))
	}))
	t.Cleanup(s.Close)
	return s, &n
}

// TestFetchCommandTrustOnFirstUse: flycl-lab fetch vit (no published digest,
// about 346 MB of safetensors) refuses a 13-byte download, records
// nothing and keeps nothing; with a digest recorded in the lock file, a
// download is verified against it and a different one refused; --forget
// vit removes the record (the file stays), and says so when there is none.
func TestFetchCommandTrustOnFirstUse(t *testing.T) {
	first, other := []byte("first weights"), []byte("other weights")
	var body atomic.Pointer[[]byte]
	body.Store(&first)
	s, n := weightsServer(t, &body)
	dir := t.TempDir()
	name := "vit_base_patch16_224.augreg2_in21k_ft_in1k.safetensors"
	file := filepath.Join(dir, name)
	sum := sha256.Sum256(first)
	want := hex.EncodeToString(sum[:])

	_, _, err := fetchCLI(t, "fetch", "vit", "--dir", dir, "--url", s.URL+"/m", "--quiet")
	var fe *fetch.FirstUseError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "13 bytes") {
		t.Fatalf("13 bytes for a 346 MB entry: %v, want a *fetch.FirstUseError", err)
	}
	if l, err := fetch.ReadLock(dir); err != nil || len(l.Files) != 0 {
		t.Fatalf("lock after a refused first use: %+v %v", l, err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s left after a refused first use", file)
	}
	// a digest recorded before: the download is checked against it
	if err := fetch.WriteLock(dir, &fetch.Lock{Files: map[string]fetch.LockedFile{name: {SHA256: want, Size: int64(len(first))}}}); err != nil {
		t.Fatal(err)
	}
	out, _, err := fetchCLI(t, "fetch", "vit", "--dir", dir, "--url", s.URL+"/m", "--quiet")
	if err != nil || !strings.Contains(out, "downloaded") || !strings.Contains(out, "recorded at the first download") || !strings.Contains(out, "use: --backbone vit:"+file) {
		t.Fatalf("fetch against a recorded digest: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(file); !bytes.Equal(b, first) {
		t.Fatalf("file holds %q", b)
	}
	// Again: verified against the lock, nothing downloaded.
	before := n.Load()
	out, _, err = fetchCLI(t, "fetch", "vit", "--dir", dir, "--url", s.URL+"/m", "--quiet")
	if err != nil || !strings.Contains(out, "already there") || n.Load() != before {
		t.Fatalf("second fetch (%d requests): %v\n%s", n.Load()-before, err, out)
	}
	// The server changes the file: the lock refuses it and nothing stays.
	os.Remove(file)
	body.Store(&other)
	_, _, err = fetchCLI(t, "fetch", "vit", "--dir", dir, "--url", s.URL+"/m", "--quiet")
	var de *fetch.DigestError
	if !errors.As(err, &de) || !de.TrustOnFirstUse || de.Want != want {
		t.Fatalf("error %v, want a first-use digest mismatch", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left in place after a digest mismatch", file)
	}
	// --forget un-pins
	if out, _, err = fetchCLI(t, "fetch", "--forget", "vit", "--dir", dir); err != nil || !strings.Contains(out, "forgot the digest") {
		t.Fatalf("fetch --forget vit: %v\n%s", err, out)
	}
	if l, err := fetch.ReadLock(dir); err != nil || len(l.Files) != 0 {
		t.Fatalf("lock after --forget: %+v %v", l, err)
	}
	if out, _, err = fetchCLI(t, "fetch", "--forget", "vit", "--dir", dir); err != nil || !strings.Contains(out, "nothing recorded") {
		t.Fatalf("fetch --forget vit again: %v\n%s", err, out)
	}
}

func TestFetchCommandPublishedDigest(t *testing.T) {
	fake := []byte("not torchvision's ResNet-50")
	var body atomic.Pointer[[]byte]
	body.Store(&fake)
	s, _ := weightsServer(t, &body)
	dir := t.TempDir()
	// A mirror serving other bytes: stopped by the published size before
	// the body is read.
	_, _, err := fetchCLI(t, "fetch", "resnet50-v2", "--dir", dir, "--url", s.URL+"/r.pth", "--quiet")
	var se *fetch.SizeError
	if !errors.As(err, &se) || se.Want != 102540417 {
		t.Fatalf("error %v, want a *SizeError against the published size", err)
	}
	// MD5-verified data set without a published size: the digest stops it.
	_, _, err = fetchCLI(t, "fetch", "cifar100", "--dir", dir, "--url", s.URL+"/c.tar.gz", "--quiet")
	var de *fetch.DigestError
	if !errors.As(err, &de) || de.Algo != "md5" || de.Want != "eb9058c3a382ffc7106e4002c42a8d85" {
		t.Fatalf("error %v, want an MD5 *DigestError", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("files left after failed downloads: %v", entries)
	}
}

func TestFetchCommandFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fetch", "nope"}, `unknown name "nope"`},
		{[]string{"fetch", "vit", "cub", "--url", "http://127.0.0.1:1/x"}, "exactly one NAME"},
		{[]string{"fetch", "vit", "--attempts", "0"}, "--attempts 0"},
		{[]string{"reproduce", "nope"}, `unknown name setting "nope"`},
	} {
		_, _, err := fetchCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	out, _, err := fetchCLI(t, "fetch")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range fetch.Catalogue() {
		if !strings.Contains(out, a.Name) || !strings.Contains(out, a.File) || !strings.Contains(out, a.Flag(a.Dir(""))) {
			t.Errorf("catalogue listing lacks %s", a.Name)
		}
	}
}

// TestFetchCommandProxyFromEnvironment runs flycl-lab fetch in a child process
// (net/http reads the proxy variables once per process) with HTTP_PROXY
// pointing at a loopback proxy, and a URL whose host does not exist.
func TestFetchCommandProxyFromEnvironment(t *testing.T) {
	if os.Getenv("FLYCL_FETCH_CHILD") != "" {
		root := newRoot()
		root.SetArgs(strings.Split(os.Getenv("FLYCL_FETCH_CHILD"), "\x1f"))
		if err := root.Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	weights := []byte("weights through a proxy")
	var (
		mu    sync.Mutex
		hosts []string
	)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.URL.Host)
		mu.Unlock()
		http.ServeContent(w, r, "m", time.Time{}, bytes.NewReader(weights))
	}))
	defer proxy.Close()
	dir := t.TempDir()
	// recorded before (these few bytes are not a first download fetch trusts)
	sum := sha256.Sum256(weights)
	if err := fetch.WriteLock(dir, &fetch.Lock{Files: map[string]fetch.LockedFile{
		"vit_base_patch16_224.augreg2_in21k_ft_in1k.safetensors": {SHA256: hex.EncodeToString(sum[:]), Size: int64(len(weights))}}}); err != nil {
		t.Fatal(err)
	}
	args := []string{"fetch", "vit", "--dir", dir, "--url", "http://weights.flycl.test/model.safetensors", "--quiet", "--attempts", "1"}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFetchCommandProxyFromEnvironment$")
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if !slices.Contains([]string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD"}, k) {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "HTTP_PROXY="+proxy.URL, "FLYCL_FETCH_CHILD="+strings.Join(args, "\x1f"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(hosts, []string{"weights.flycl.test"}) {
		t.Fatalf("proxy saw hosts %q, want weights.flycl.test once", hosts)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "vit_base_patch16_224.augreg2_in21k_ft_in1k.safetensors")); !bytes.Equal(b, weights) {
		t.Fatalf("fetched %q", b)
	}
}

func TestFetchProgressLine(t *testing.T) {
	p := fetch.Progress{File: "resnet50-11ad3fa6.pth", Done: 51270208, Total: 102540417, Rate: 10e6, ETA: 5127 * time.Millisecond}
	got := progressLine(p, 50)
	for _, w := range []string{"resnet50-11ad3fa6.pth", " 50.0%", "51.3 MB / 102.5 MB", "10.0 MB/s", "ETA 5s"} {
		if !strings.Contains(got, w) {
			t.Errorf("%q lacks %q", got, w)
		}
	}
	var b bytes.Buffer
	bar := newByteBar(&b, false) // not a terminal: a line per tenth
	for done := int64(0); done <= 1000; done += 50 {
		bar.update(fetch.Progress{File: "f", Done: done, Total: 1000, ETA: -1})
	}
	if lines := strings.Count(b.String(), "\n"); lines != 11 {
		t.Errorf("%d lines for 0..100%%, want 11:\n%s", lines, b.String())
	}
}
