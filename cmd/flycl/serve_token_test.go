package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/server"
)

// servingAnyRE finds the address a server logs, whatever its interface.
var servingAnyRE = regexp.MustCompile(`msg=serving addr=http://(\S+)`)

// serveInProcess runs flycl serve in this process (its log, which goes to
// stderr, captured) until stop is called; it returns once the server
// logs its address, or with the command's error when it exits first.
func serveInProcess(t *testing.T, args ...string) (url string, log *syncBuf, stop func() error, err error) {
	t.Helper()
	r, w, perr := os.Pipe()
	if perr != nil {
		t.Fatal(perr)
	}
	old := os.Stderr
	os.Stderr = w // the server's logger is made with the stderr of its start
	ctx, cancel := context.WithCancel(context.Background())
	root := newRoot()
	root.SetArgs(append([]string{"serve"}, args...))
	exited := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		w.Close()
		exited <- err
	}()
	log = &syncBuf{}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			log.add(sc.Text())
			if m := servingAnyRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	defer func() { os.Stderr = old }()
	// No deadline: the server either logs its address or exits.
	select {
	case addr := <-found:
		return "http://" + addr, log, func() error { cancel(); return <-exited }, nil
	case err := <-exited:
		cancel()
		return "", log, nil, err
	}
}

// TestServeTokenFile: serve --token-file F with a missing F creates it (64
// hex digits, mode 0600) and logs where; the server then refuses a learn
// without the token (401) and takes it with the token; a restart reads
// the same file without creating it again, and a server with a token does
// not warn that anyone may change the model.
func TestServeTokenFile(t *testing.T) {
	dir := t.TempDir()
	model, token := filepath.Join(dir, "m.flycl"), filepath.Join(dir, "token")
	args := []string{"--addr", "127.0.0.1:0", "--model", model, "--dim", "6", "--m", "200", "--p", "3", "--k", "60", "--token-file", token}
	var tok string
	for run := range 2 {
		url, log, stop, err := serveInProcess(t, args...)
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, log)
		}
		b, err := os.ReadFile(token)
		if err != nil {
			t.Fatal(err)
		}
		if run == 0 {
			tok = strings.TrimSpace(string(b))
			if raw, err := hex.DecodeString(tok); err != nil || len(raw) != 32 {
				t.Fatalf("created token %q is not 32 bytes of hex", tok)
			}
			if st, _ := os.Stat(token); st.Mode().Perm() != 0o600 {
				t.Fatalf("token file mode %v, want 0600", st.Mode().Perm())
			}
		} else if strings.TrimSpace(string(b)) != tok {
			t.Fatalf("the restart changed the token file: %q", b)
		}
		created := strings.Contains(log.String(), "created a new bearer token") && strings.Contains(log.String(), token)
		if created != (run == 0) {
			t.Fatalf("run %d: log says created = %v:\n%s", run, created, log)
		}
		if strings.Contains(log.String(), "no --token-file") {
			t.Fatalf("a server with a token warns about having none:\n%s", log)
		}
		body, _ := json.Marshal(server.Request{Features: [][]float32{{1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0}}, Labels: []string{"a", "b"}})
		for _, tc := range []struct {
			token string
			want  int
		}{{"", 401}, {"wrong-token-x", 403}, {tok, 200}} {
			req, _ := http.NewRequest("POST", url+"/v1/learn", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("run %d: learn with token %q: %d %s, want %d", run, tc.token, resp.StatusCode, b, tc.want)
			}
		}
		if err := stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}
	}
}

// TestServeNoToken: without a token, serve refuses an address beyond
// loopback (every interface, or an unspecified one), before it opens the
// model, unless --insecure-no-token; on loopback, and with the flag, it
// serves and warns that anyone who can reach it may change the model.
func TestServeNoToken(t *testing.T) {
	dir := t.TempDir()
	fresh := []string{"--model", filepath.Join(dir, "m.flycl"), "--dim", "6", "--m", "200", "--p", "3", "--k", "60"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:0"}, "beyond loopback without a token"},
		{[]string{"--addr", ":0"}, "beyond loopback without a token"},
		{[]string{"--addr", "[::]:0"}, "beyond loopback without a token"},
		{[]string{"--addr", "0.0.0.0:0", "--insecure-no-token", "--token-file", filepath.Join(dir, "t")}, "give one of them"},
	} {
		_, err := runCLI(t, append(append([]string{"serve"}, tc.args...), fresh...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "t")); err == nil {
		t.Errorf("a refused serve created its token file")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "127.0.0.1:0"}, "any program or user on this machine"},
		{[]string{"--addr", "localhost:0"}, "any program or user on this machine"},
		{[]string{"--addr", "0.0.0.0:0", "--insecure-no-token"}, "anyone on the network"},
	} {
		_, log, stop, err := serveInProcess(t, append(tc.args, fresh...)...)
		if err != nil {
			t.Fatalf("serve %v: %v\n%s", tc.args, err, log)
		}
		if err := stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}
		if l := log.String(); !strings.Contains(l, "no --token-file: anyone who can reach this address may change the model") || !strings.Contains(l, tc.want) {
			t.Errorf("serve %v: no warning with %q:\n%s", tc.args, tc.want, l)
		}
	}
}

// TestServeMaxDecode: --max-decode below --max-body (a request of the
// largest size could never be read) or negative is refused before serve
// listens, quoting the value.
func TestServeMaxDecode(t *testing.T) {
	fresh := []string{"--addr", "127.0.0.1:0", "--model", filepath.Join(t.TempDir(), "m.flycl"), "--dim", "6"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-body", "1000", "--max-decode", "999"}, "--max-decode 999"},
		{[]string{"--max-decode", "-1"}, "--max-decode -1"},
	} {
		_, err := runCLI(t, append(append([]string{"serve"}, tc.args...), fresh...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
