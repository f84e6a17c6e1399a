package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flycl/flycl/app/server"
	"github.com/flycl/flycl/app/server/api"
	"github.com/flycl/flycl/app/store"
)

// built is the flycl binary the tests that run it share: built once per
// run of the package's tests, removed by TestMain.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// buildFlycl builds this command (once for all the tests of a run) and
// returns the binary.
func buildFlycl(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "flycl-test-bin-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "flycl")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// syncBuf collects a process's log lines for failure messages.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(line + "\n")
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var servingRE = regexp.MustCompile(`addr=http://(127\.0\.0\.1:\d+)`)

// startServe starts "flycl serve" on a free loopback port and returns the
// process and its base URL once it is listening.
func startServe(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *syncBuf) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := &syncBuf{}
	found := make(chan string, 1)
	ended := make(chan struct{}) // stderr closed: the process has exited
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.add(sc.Text())
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	// No deadline: the server either logs its address or exits (a start
	// that hangs fails at go test's -timeout).
	select {
	case addr := <-found:
		return cmd, "http://" + addr, log
	case <-ended:
		cmd.Wait()
		t.Fatalf("flycl serve exited without serving:\n%s", log)
	}
	return nil, "", nil
}

// learnOnce teaches one new class of 6 random feature vectors (d=16) and
// reports whether the server acknowledged it.
func learnOnce(client *http.Client, url, name string, r *rand.Rand) bool {
	x := make([][]float32, 6)
	for i := range x {
		x[i] = make([]float32, 16)
		for j := range x[i] {
			x[i][j] = float32(r.NormFloat64())
		}
	}
	c := api.NewClient(url, "")
	c.HTTP = client
	_, err := c.Learn(context.Background(), api.Request{Features: x, Label: name})
	return err == nil
}

// TestServeSurvivesKill9 starts the real binary, learns continuously from
// two clients and kills the process with SIGKILL at random moments, 20
// times. After every kill the model file must load, hold every learn that
// was acknowledged, and the restarted server must serve it.
func TestServeSurvivesKill9(t *testing.T) {
	bin := buildFlycl(t)
	model := filepath.Join(t.TempDir(), "cam.flycl")
	args := []string{"--model", model, "--dim", "16", "--m", "1000", "--p", "8", "--k", "200", "--lambdas", "0.01,1,100"}
	r := rand.New(rand.NewPCG(1, 2))
	var acked []string
	next := 0
	for round := range 20 {
		cmd, url, log := startServe(t, bin, args...)
		// The restarted server serves every acknowledged class.
		cr, err := api.NewClient(url, "").Classes(context.Background())
		if err != nil {
			t.Fatalf("round %d: classes after restart: %v\n%s", round, err, log)
		}
		served := map[string]bool{}
		for _, c := range cr.Classes {
			served[c.Name] = true
		}
		for _, n := range acked {
			if !served[n] {
				t.Fatalf("round %d: acknowledged class %s not served after restart", round, n)
			}
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{} // the kill ends its connections
				rr := rand.New(rand.NewPCG(uint64(round), uint64(w)))
				for {
					select {
					case <-stop:
						return
					default:
					}
					mu.Lock()
					name := fmt.Sprintf("c%d", next)
					next++
					mu.Unlock()
					if !learnOnce(client, url, name, rr) {
						return
					}
					mu.Lock()
					acked = append(acked, name)
					mu.Unlock()
				}
			}()
		}
		// Kill at a random moment after this round's first acknowledged
		// learn, so that every round has something to lose (a fixed sleep
		// would make the count depend on the machine's speed).
		clientsDone := make(chan struct{})
		go func() { wg.Wait(); close(clientsDone) }()
		mu.Lock()
		before := len(acked)
		mu.Unlock()
		for {
			mu.Lock()
			got := len(acked) > before
			mu.Unlock()
			if got {
				break
			}
			select {
			case <-clientsDone:
				t.Fatalf("round %d: both clients stopped before any learn was acknowledged\n%s", round, log)
			case <-time.After(5 * time.Millisecond):
			}
		}
		time.Sleep(time.Duration(r.IntN(700)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		close(stop)
		wg.Wait()

		f, err := store.LoadFile(model)
		if len(acked) == 0 && os.IsNotExist(errUnwrapAll(err)) {
			continue // killed before the first learn was saved
		}
		if err != nil {
			t.Fatalf("round %d: model file does not load after kill -9: %v", round, err)
		}
		names := f.Snapshot.Predictor().Classes().Names()
		for _, n := range acked {
			if !slices.Contains(names, n) {
				t.Fatalf("round %d: acknowledged class %s is not in the file (%d classes, %d acknowledged)", round, n, len(names), len(acked))
			}
		}
		if v := f.Snapshot.Version(); v < uint64(len(acked)) {
			t.Fatalf("round %d: file version %d < %d acknowledged learns", round, v, len(acked))
		}
	}
	if len(acked) < 20 { // at least one per round, by construction
		t.Fatalf("only %d learns acknowledged in 20 rounds", len(acked))
	}
	t.Logf("%d learns acknowledged over 20 kills", len(acked))
}

func errUnwrapAll(err error) error {
	for err != nil {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		if n := u.Unwrap(); n != nil {
			err = n
		} else {
			return err
		}
	}
	return err
}

func getJSON(url string, out any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %d %s", url, resp.StatusCode, b)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// TestServeSIGTERM checks a graceful stop: SIGTERM while a learn is in
// flight lets it finish (acknowledged and saved) and the process exits 0.
// The learn is known to be in flight because its handler asked for the
// body (Expect: 100-continue) before the signal is sent.
func TestServeSIGTERM(t *testing.T) {
	bin := buildFlycl(t)
	model := filepath.Join(t.TempDir(), "cam.flycl")
	cmd, url, log := startServe(t, bin, "--model", model, "--dim", "16", "--m", "2000", "--p", "8", "--k", "200")
	r := rand.New(rand.NewPCG(3, 4))
	if !learnOnce(http.DefaultClient, url, "first", r) {
		t.Fatal("first learn failed")
	}
	x := make([][]float32, 6)
	for i := range x {
		x[i] = make([]float32, 16)
		for j := range x[i] {
			x[i][j] = float32(r.NormFloat64())
		}
	}
	body, _ := json.Marshal(server.Request{Features: x, Label: "second"})
	req, err := http.NewRequest("POST", url+"/v1/learn", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	reading := make(chan struct{}, 1)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got100Continue: func() { reading <- struct{}{} },
	}))
	// The client sends the body only after the server's 100 Continue,
	// which the handler triggers by reading it.
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Hour}}
	type result struct {
		code int
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- result{code: resp.StatusCode, body: string(b)}
	}()
	select {
	case <-reading:
	case res := <-done:
		t.Fatalf("learn answered before reading its body: %+v", res)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.code != http.StatusOK {
		t.Fatalf("learn in flight at SIGTERM: %d %s %v\n%s", res.code, res.body, res.err, log)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, log)
	}
	f, err := store.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if names := f.Snapshot.Predictor().Classes().Names(); !slices.Contains(names, "first") || !slices.Contains(names, "second") {
		t.Fatalf("classes %v after SIGTERM, want first and second", names)
	}
}
