// Command testsummary runs "go test -json" and prints what plain "go test"
// prints (each package's ok/FAIL line, the output of failing tests, build
// errors), while recording every skipped test and its reason, so that a
// green run can end with the list of what it did not check:
//
//	testsummary run [-log FILE] [-label TEXT] -- go test -json ARGS...
//	testsummary report FILE
//
// run exits with the status of the command it runs. It appends one JSON line
// per skipped test to FILE. report prints the skipped tests of FILE, each
// once with its reason and the runs (labels) that skipped it.
//
// Written here rather than taken from gotestsum: make test needs only this
// filter and a list at the end, and a small program of the standard library
// adds no module to download.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// event is one line of test2json output (go doc test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output, build-fail
}

// Skip is one skipped test, as recorded in the log.
type Skip struct {
	Package string `json:"package"`
	Test    string `json:"test"`
	Reason  string `json:"reason"`
	Label   string `json:"label,omitempty"`
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "run":
		fs := flag.NewFlagSet("run", flag.ExitOnError)
		logFile := fs.String("log", "", "append the skipped tests to this file (JSON lines)")
		label := fs.String("label", "", "name of this run in the report (e.g. the OpenBLAS setting)")
		fs.Parse(os.Args[2:])
		if fs.NArg() == 0 {
			usage()
		}
		os.Exit(run(fs.Args(), *logFile, *label))
	case "report":
		if len(os.Args) != 3 {
			usage()
		}
		if err := report(os.Stdout, os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testsummary run [-log FILE] [-label TEXT] -- go test -json ARGS...\n       testsummary report FILE")
	os.Exit(2)
}

// run runs the command, filters its test2json output to stdout and appends
// the skips to logFile; it returns the command's exit status.
func run(args []string, logFile, label string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		return 1
	}
	skips, ferr := filter(os.Stdout, out, label)
	werr := cmd.Wait()
	if logFile != "" && len(skips) > 0 {
		if err := appendSkips(logFile, skips); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			return 1
		}
	}
	var exit *exec.ExitError
	switch {
	case errors.As(werr, &exit):
		return exit.ExitCode()
	case werr != nil:
		fmt.Fprintln(os.Stderr, "testsummary:", werr)
		return 1
	case ferr != nil:
		fmt.Fprintln(os.Stderr, "testsummary:", ferr)
		return 1
	}
	return 0
}

// filter copies to w what go test without -json prints and returns the
// skipped tests with their reasons. Lines that are not JSON (a command's
// own messages) are copied as they are.
func filter(w io.Writer, r io.Reader, label string) ([]Skip, error) {
	type key struct{ pkg, test string }
	buf := map[key][]string{} // output of each running test
	var skips []Skip
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "output":
			if e.Test != "" {
				buf[k] = append(buf[k], e.Output)
				continue
			}
			// package level: ok/FAIL lines, output outside tests; "PASS"
			// is what -v adds.
			if strings.TrimSpace(e.Output) != "PASS" {
				fmt.Fprint(w, e.Output)
			}
		case "fail":
			if e.Test != "" {
				for _, l := range buf[k] {
					if !strings.HasPrefix(l, "=== ") { // -v's RUN/PAUSE/CONT lines
						fmt.Fprint(w, l)
					}
				}
				delete(buf, k)
			}
		case "skip":
			if e.Test != "" {
				skips = append(skips, Skip{Package: e.Package, Test: e.Test, Reason: reason(buf[k]), Label: label})
				delete(buf, k)
			}
		case "pass":
			delete(buf, k)
		}
	}
	return skips, sc.Err()
}

// reason is what a skipped test logged, without the RUN/SKIP framing lines.
func reason(lines []string) string {
	var r []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		r = append(r, t)
	}
	if len(r) == 0 {
		return "(no reason given)"
	}
	return strings.Join(r, " ")
}

func appendSkips(path string, skips []Skip) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, s := range skips {
		if err := enc.Encode(s); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// report prints each skipped test of the log once, with its reason and the
// runs that skipped it. A missing log means no run recorded a skip.
func report(w io.Writer, path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(w, "skipped tests: none")
		return nil
	}
	if err != nil {
		return err
	}
	type key struct{ pkg, test, reason string }
	labels := map[key][]string{}
	var order []key
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var s Skip
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			return fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		k := key{s.Package, s.Test, s.Reason}
		if _, ok := labels[k]; !ok {
			order = append(order, k)
		}
		if s.Label != "" && !contains(labels[k], s.Label) {
			labels[k] = append(labels[k], s.Label)
		} else if labels[k] == nil {
			labels[k] = []string{}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].pkg != order[j].pkg {
			return order[i].pkg < order[j].pkg
		}
		return order[i].test < order[j].test
	})
	fmt.Fprintf(w, "skipped tests: %d (each with its reason; these did not run)\n", len(order))
	for _, k := range order {
		runs := ""
		if l := labels[k]; len(l) > 0 {
			runs = " [" + strings.Join(l, "; ") + "]"
		}
		fmt.Fprintf(w, "  SKIP %s %s%s\n       %s\n", k.pkg, k.test, runs, k.reason)
	}
	return nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
