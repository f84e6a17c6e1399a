package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/flycl/flycl/app/fetch"
)

const (
	defaultWeightsDir = fetch.DefaultWeightsDir
	defaultDataDir    = fetch.DefaultDataDir
)

// fetchFlags are the download settings fetch and reproduce share.
type fetchFlags struct {
	attempts int
	stall    time.Duration
	quiet    bool
}

func (f *fetchFlags) register(c *cobra.Command) {
	c.Flags().IntVar(&f.attempts, "attempts", 5, "attempts per URL for failures that may pass (network errors, stalls, HTTP 5xx)")
	c.Flags().DurationVar(&f.stall, "stall-timeout", time.Minute, "give up an attempt that receives nothing for this long")
	c.Flags().BoolVar(&f.quiet, "quiet", false, "no progress bar")
}

// client builds the downloader: proxies from HTTPS_PROXY/HTTP_PROXY/NO_PROXY,
// progress and notices on stderr.
func (f *fetchFlags) client(stderr io.Writer) (*fetch.Client, error) {
	if f.attempts < 1 {
		return nil, fmt.Errorf("--attempts %d: want at least 1", f.attempts)
	}
	if f.stall <= 0 {
		return nil, fmt.Errorf("--stall-timeout %v: want a positive duration", f.stall)
	}
	bar := newByteBar(stderr, f.quiet)
	return &fetch.Client{
		Proxy:        http.ProxyFromEnvironment,
		Attempts:     f.attempts,
		StallTimeout: f.stall,
		Progress:     bar.update,
		Notice: func(asset, msg string) {
			bar.clear()
			fmt.Fprintf(stderr, "%s: %s\n", asset, msg)
		},
	}, nil
}

// fetchOptions are flycl-lab fetch's flags.
type fetchOptions struct {
	ff     fetchFlags
	dir    string
	url    string
	list   bool
	forget bool
}

// AddFlags adds fetch's flags to c.
func (o *fetchOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.dir, "dir", "", "folder for every asset (default: "+defaultWeightsDir+"/ for weights, "+defaultDataDir+"/ for data sets)")
	c.Flags().StringVar(&o.url, "url", "", "download the one NAME from this URL instead (a mirror); it is verified the same way")
	c.Flags().BoolVar(&o.list, "list", false, "list the catalogue")
	c.Flags().BoolVar(&o.forget, "forget", false, "remove the digest (or split file list) recorded at the first download of each NAME from the folder's "+fetch.LockName+", so that the next fetch trusts a new download again; the file stays")
	o.ff.register(c)
}

func fetchCmd() *cobra.Command {
	var o fetchOptions
	c := &cobra.Command{
		Use:   "fetch NAME... [--dir D] [--url URL]",
		Short: "Download the paper's backbones and data sets from their official locations and verify them",
		Long: `Downloads each named asset from its official location and verifies it:
against the published SHA-256 or MD5 where there is one, else against the
SHA-256 recorded in D/` + fetch.LockName + ` at the first download (trust on
first use: the two ViT-B/16 weight files, whose publishers give no digest).
A first download is trusted only when its size is the catalogue's (within
10% of an approximate one) and its first bytes are those of its type
(safetensors, an .npz's zip); --forget NAME removes what the lock file
recorded for NAME, so that the next fetch trusts a new download again.

A download resumes where an interrupted one stopped (HTTP Range; FILE.part in
the folder), retries with backoff, gives up after --stall-timeout without
data, honours HTTPS_PROXY/HTTP_PROXY/NO_PROXY, checks the free space first,
and renames FILE.part to FILE only when the digest matches (a wrong digest
removes it). A split archive (imagenet-r, imagenet-a, vtab) is converted into
the folder D/NAME/train/<class>/, D/NAME/test/<class>/, verified by its file
count and the SHA-256 of its sorted file list.

Weights go to ` + defaultWeightsDir + `/ and data sets to ` + defaultDataDir + `/ unless --dir is given.
"flycl-lab fetch" alone lists the catalogue; docs/REPRODUCE.md explains it.`,
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run downloads and verifies the named assets (fetch.Client.Fetch), lists the catalogue, or forgets recorded digests.
func (o *fetchOptions) run(cmd *cobra.Command, args []string) error {
	out := cmd.OutOrStdout()
	if o.forget {
		if len(args) == 0 || o.url != "" || o.list {
			return fmt.Errorf("--forget NAME...: give the names to forget, without --url or --list")
		}
		return forgetAssets(out, args, o.dir)
	}
	if o.list || len(args) == 0 {
		return printCatalogue(out)
	}
	assets, err := fetch.Resolve(args, o.url)
	if err != nil {
		return err
	}
	cl, err := o.ff.client(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	for _, a := range assets {
		res, err := cl.Fetch(cmd.Context(), a, a.Dir(o.dir))
		if err != nil {
			return err
		}
		printResult(out, res, a.Dir(o.dir))
	}
	return nil
}

// forgetAssets un-pins the named assets in their folders' lock files.
func forgetAssets(w io.Writer, names []string, dir string) error {
	assets, err := fetch.Resolve(names, "")
	if err != nil {
		return err
	}
	for _, a := range assets {
		d := a.Dir(dir)
		gone, err := fetch.Forget(a, d)
		if err != nil {
			return err
		}
		if gone {
			fmt.Fprintf(w, "%s: forgot the digest recorded in %s/%s; the next flycl-lab fetch %s trusts a new download (of the catalogue's size and type) again\n", a.Name, d, fetch.LockName, a.Name)
		} else {
			fmt.Fprintf(w, "%s: nothing recorded in %s/%s\n", a.Name, d, fetch.LockName)
		}
	}
	return nil
}

// printCatalogue lists every asset.
func printCatalogue(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tfile\tsize\tdigest\tflag")
	for _, a := range fetch.Catalogue() {
		d := a.Digest.Algo + " published"
		if a.TrustOnFirstUse() {
			d = "none published: trust on first use"
		}
		flag := a.Flag(a.Dir(""))
		if flag == "" {
			flag = "- (no train/test split)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.File, a.SizeText(), d, flag)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nflycl fetch NAME... downloads and verifies; docs/REPRODUCE.md says where each comes from.")
	return err
}

// printResult says what was fetched and how it was verified.
func printResult(w io.Writer, r *fetch.Result, dir string) {
	a := r.Asset
	how := "already there"
	if r.Downloaded {
		how = "downloaded"
		if r.Resumed {
			how = "downloaded (resumed)"
		}
	}
	switch {
	case r.SHA256 == "": // a converted split verified without its archive
		fmt.Fprintf(w, "%s: %s already there\n", a.Name, r.Path)
	case r.Recorded:
		fmt.Fprintf(w, "%s: %s %s, %s, SHA-256 %s\n    no digest is published for this file: this first copy is trusted and its SHA-256 is now in %s/%s; later downloads are checked against it\n",
			a.Name, r.Path, how, fetch.HumanBytes(r.Size), r.SHA256, dir, fetch.LockName)
	case a.TrustOnFirstUse():
		fmt.Fprintf(w, "%s: %s %s, %s, SHA-256 matches the one recorded at the first download (%s/%s; no digest is published)\n",
			a.Name, r.Path, how, fetch.HumanBytes(r.Size), dir, fetch.LockName)
	default:
		fmt.Fprintf(w, "%s: %s %s, %s, %s matches the published digest (%s)\n",
			a.Name, r.Path, how, fetch.HumanBytes(r.Size), r.Verified.Algo, a.DigestSource)
	}
	if s := r.Split; s != nil {
		fmt.Fprintf(w, "    split: %d files (train %d, test %d), %d classes, file-list SHA-256 %s\n", s.Files, s.Train, s.Test, s.Classes, s.ListSHA256)
	}
	if f := a.Flag(dir); f != "" {
		fmt.Fprintf(w, "    use: --%s %s\n", a.FlagName(), f)
	}
}

// byteBar draws download progress on a terminal (one line redrawn), or a
// line per 10% otherwise.
type byteBar struct {
	w        io.Writer
	tty      bool
	quiet    bool
	drawn    bool
	lastTick int64
	file     string
}

func newByteBar(w io.Writer, quiet bool) *byteBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &byteBar{w: w, tty: tty, quiet: quiet}
}

func (b *byteBar) update(p fetch.Progress) {
	if b.quiet {
		return
	}
	if p.File != b.file {
		b.file, b.lastTick = p.File, -1
	}
	pct := -1.0
	if p.Total > 0 {
		pct = 100 * float64(p.Done) / float64(p.Total)
	}
	line := progressLine(p, pct)
	if b.tty {
		fmt.Fprintf(b.w, "\r%-78s", line)
		b.drawn = true
		if p.Total > 0 && p.Done == p.Total {
			b.clear()
		}
		return
	}
	tick := p.Done * 10 / max(p.Total, 1)
	if p.Total <= 0 {
		tick = p.Done >> 27 // every 128 MiB
	}
	if tick != b.lastTick {
		b.lastTick = tick
		fmt.Fprintln(b.w, line)
	}
}

// progressLine is "FILE  45.0%  46.1 MB / 102.5 MB  12.3 MB/s  ETA 4s".
func progressLine(p fetch.Progress, pct float64) string {
	var sb strings.Builder
	name := p.File
	if len(name) > 28 {
		name = name[:25] + "..."
	}
	fmt.Fprintf(&sb, "%-28s ", name)
	if pct >= 0 {
		fmt.Fprintf(&sb, "%5.1f%%  %s / %s", pct, fetch.HumanBytes(p.Done), fetch.HumanBytes(p.Total))
	} else {
		fmt.Fprintf(&sb, "%s", fetch.HumanBytes(p.Done))
	}
	if p.Rate > 0 {
		fmt.Fprintf(&sb, "  %s/s", fetch.HumanBytes(int64(p.Rate)))
	}
	if p.ETA >= 0 && p.Total > 0 && p.Done < p.Total {
		fmt.Fprintf(&sb, "  ETA %v", p.ETA.Round(time.Second))
	}
	return sb.String()
}

// clear ends a drawn bar line.
func (b *byteBar) clear() {
	if b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
}
