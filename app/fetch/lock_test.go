package fetch

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseLock(t *testing.T) {
	good, err := os.ReadFile("testdata/flycl-fetch.lock")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLock(good)
	if err != nil {
		t.Fatal(err)
	}
	e := l.Files["vit_base_patch16_224.augreg2_in21k_ft_in1k.safetensors"]
	if e.Size != 346284714 || e.SHA256 != strings.Repeat("0", 64) || l.Splits["imagenet-r"].Files != 30000 {
		t.Fatalf("parsed %+v", l)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not json", "{", "unexpected EOF"},
		{"version", `{"version":2,"files":{}}`, "version 2"},
		{"unknown field", `{"version":1,"files":{},"extra":1}`, "unknown field"},
		{"trailing", `{"version":1,"files":{}} {}`, "after the JSON object"},
		{"short hex", `{"version":1,"files":{"a":{"sha256":"abc","size":1}}}`, "not 64 lower-case hex"},
		{"upper hex", `{"version":1,"files":{"a":{"sha256":"` + strings.Repeat("A", 64) + `","size":1}}}`, "not 64 lower-case hex"},
		{"path", `{"version":1,"files":{"../a":{"sha256":"` + strings.Repeat("a", 64) + `","size":1}}}`, "not a plain file name"},
		{"negative size", `{"version":1,"files":{"a":{"sha256":"` + strings.Repeat("a", 64) + `","size":-1}}}`, "size -1"},
		{"split digest", `{"version":1,"files":{},"splits":{"s":{"files":1,"list_sha256":"x"}}}`, "list_sha256"},
		{"split count", `{"version":1,"files":{},"splits":{"s":{"files":-2,"list_sha256":"` + strings.Repeat("a", 64) + `"}}}`, "files -2"},
		{"too big", `{"version":1,"files":{}}` + strings.Repeat(" ", maxLock), "more than a lock file holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLock([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), LockName) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, LockName, tc.want)
			}
		})
	}
}

func TestLockRoundTrip(t *testing.T) {
	dir := t.TempDir()
	l, err := ReadLock(dir) // none yet: empty
	if err != nil || len(l.Files) != 0 {
		t.Fatalf("%+v, %v", l, err)
	}
	l.Files["w.safetensors"] = LockedFile{SHA256: strings.Repeat("c", 64), Size: 7, URL: "https://x/y"}
	l.Splits["vtab"] = LockedSplit{Files: 3, ListSHA256: strings.Repeat("d", 64)}
	if err := WriteLock(dir, l); err != nil {
		t.Fatal(err)
	}
	back, err := ReadLock(dir)
	if err != nil || !reflect.DeepEqual(back, l) {
		t.Fatalf("read back %+v, %v; want %+v", back, err, l)
	}
}

// FuzzParseLock: a lock file is outside bytes. Whatever parses must
// survive Marshal and parse to the same value.
func FuzzParseLock(f *testing.F) {
	if b, err := os.ReadFile("testdata/flycl-fetch.lock"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"files":{}}`))
	f.Add([]byte(`{"version":1,"files":{"a":{"sha256":"` + strings.Repeat("a", 64) + `","size":1}},"splits":{"s":{"files":0,"list_sha256":"` + strings.Repeat("b", 64) + `"}}}`))
	f.Add([]byte(`{"version":1,"files":{"a/b":{}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLock(b)
		if err != nil {
			return
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseLock(out)
		if err != nil {
			t.Fatalf("marshalled lock does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, l) {
			t.Fatalf("round trip changed %+v into %+v", l, back)
		}
	})
}

// FuzzSplitEntry: archive member names are outside bytes. A kept name
// must map to exactly split/class/file inside the folder.
func FuzzSplitEntry(f *testing.F) {
	for n := range splitMembers {
		f.Add(n)
	}
	for _, n := range []string{"../train/a/b", "train/a/../../b", "/train/a/b", "a\\train\\b\\c", "train//a/b", "x/test/c/./d"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		rel, _, skip, err := splitEntry(name)
		if err != nil || skip {
			return
		}
		parts := strings.Split(rel, "/")
		if len(parts) != 3 || parts[0] != "train" && parts[0] != "test" {
			t.Fatalf("%q → %q: not split/class/file", name, rel)
		}
		for _, p := range parts {
			if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "\\\x00") {
				t.Fatalf("%q → %q: component %q", name, rel, p)
			}
		}
	})
}
