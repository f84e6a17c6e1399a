//go:build linux

package atomicfile

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, path, content string) error {
	t.Helper()
	f, err := Create(path)
	if err != nil {
		return err
	}
	f.WriteString(content)
	return f.Commit()
}

// TestStaleTemporariesRemoved: temporaries left by killed writers (no lock
// held) are removed by the next write of the same target; a live writer's
// temporary, other targets' temporaries and look-alike names stay.
func TestStaleTemporariesRemoved(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.flycl")
	stale := []string{".m.flycl.tmp-123", ".m.flycl.tmp-99999"}
	keep := []string{".other.flycl.tmp-5", ".m.flycl.tmp-12x", "m.flycl.tmp-7", ".m.flycl.tmp-"}
	for _, n := range append(append([]string{}, stale...), keep...) {
		os.WriteFile(filepath.Join(dir, n), []byte("junk"), 0o644)
	}
	os.Symlink("/etc/hostname", filepath.Join(dir, ".m.flycl.tmp-8")) // not a regular file: kept
	keep = append(keep, ".m.flycl.tmp-8")
	live, err := Create(p) // a writer still at work
	if err != nil {
		t.Fatal(err)
	}
	if err := write(t, p, "new"); err != nil {
		t.Fatal(err)
	}
	for _, n := range stale {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Errorf("stale %s not removed", n)
		}
	}
	for _, n := range keep {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s removed", n)
		}
	}
	live.WriteString("live")
	if err := live.Commit(); err != nil {
		t.Fatalf("the live writer's temporary was taken: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "live" {
		t.Fatalf("content %q", b)
	}
}

// TestModes: an existing file keeps its mode; a new file gets 0666 less
// the umask.
func TestModes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "secret")
	os.WriteFile(p, []byte("old"), 0o600)
	os.Chmod(p, 0o600)
	if err := write(t, p, "new"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("existing 0600 file became %v", fi.Mode().Perm())
	}
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	q := filepath.Join(dir, "fresh")
	if err := write(t, q, "x"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(q); fi.Mode().Perm() != 0o640 {
		t.Errorf("new file with umask 027 has mode %v, want 0640", fi.Mode().Perm())
	}
}

// TestNonRegularTargets: directories, devices and FIFOs are refused and
// left alone; a symbolic link is followed (its target replaced, the link
// kept); a dangling link is refused.
func TestNonRegularTargets(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	devLink := filepath.Join(dir, "null")
	os.Symlink("/dev/null", devLink)
	for path, want := range map[string]string{fifo: "named pipe", sub: "directory", devLink: "a device"} {
		if err := write(t, path, "x"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", path, err, want)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Error("FIFO replaced")
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatal("/dev/null is no longer a device")
	}
	// A device node at the path itself (creating one needs privileges).
	dev := filepath.Join(dir, "dev")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err == nil { // like /dev/null: major 1, minor 3
		if err := write(t, dev, "x"); err == nil || !strings.Contains(err.Error(), "a device") {
			t.Errorf("device node: %v", err)
		}
		if fi, err := os.Lstat(dev); err != nil || fi.Mode()&os.ModeDevice == 0 {
			t.Error("device node replaced")
		}
	} else {
		t.Logf("device node not tested (mknod: %v)", err)
	}

	real := filepath.Join(sub, "real")
	os.WriteFile(real, []byte("old"), 0o640)
	os.Chmod(real, 0o640)
	link := filepath.Join(dir, "link")
	os.Symlink("sub/real", link)
	if err := write(t, link, "new"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("symbolic link replaced by a file")
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("link target holds %q", b)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o640 {
		t.Errorf("link target mode %v", fi.Mode().Perm())
	}
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("nowhere", dangling)
	if err := write(t, dangling, "x"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("dangling link: %v", err)
	}
}

// TestKilledWriter: a writer killed with SIGKILL in the middle of writing
// leaves its temporary behind; the next write of the target removes it.
func TestKilledWriter(t *testing.T) {
	if target := os.Getenv("ATOMICFILE_TEST_WRITER"); target != "" {
		f, err := Create(target)
		if err != nil {
			os.Exit(2)
		}
		f.WriteString("half")
		f.Sync()
		os.Stdout.WriteString("writing\n")
		select {} // killed here
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "m.flycl")
	for i := 0; i < 3; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_TEST_WRITER="+p)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "writing\n" {
			t.Fatalf("writer said %q", line)
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	// Each writer removed its killed predecessor's temporary: one is left.
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || !isTemp(ents[0].Name(), "m.flycl") {
		t.Fatalf("after 3 killed writers: %v, want the last one's temporary", ents)
	}
	if err := write(t, p, "whole"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != "m.flycl" {
		t.Fatalf("left: %v", ents)
	}
}
