package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSelfPath: the loader's name of the file libflycl's code lies in is,
// in a test binary (libflycl's code linked in, as libflycl.a is into a
// C program), the program itself: the kernel's /proc/self/exe
// (os.Executable) names the same file.
func TestSelfPath(t *testing.T) {
	got := selfPath()
	if got == "" {
		t.Fatal("selfPath: the loader named no file")
	}
	want, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	gi, err1 := os.Stat(got)
	wi, err2 := os.Stat(want)
	if err1 != nil || err2 != nil || !os.SameFile(gi, wi) {
		t.Errorf("selfPath %s (%v), want the test binary %s (%v)", got, err1, want, err2)
	}
	if !filepath.IsAbs(got) {
		t.Errorf("selfPath %s is not absolute", got)
	}
}
