package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress shows long work on stderr: a bar on a terminal, a line every
// `every` steps (and at the end) otherwise, nothing when quiet.
type Progress struct {
	quiet bool
	tty   bool
	every int
	w     io.Writer
	bar   *progressbar.ProgressBar
	last  int
}

func NewProgress(quiet bool, every int) *Progress {
	return &Progress{quiet: quiet, tty: term.IsTerminal(int(os.Stderr.Fd())), every: max(every, 1), w: os.Stderr}
}

// Update reports done of total with a description of the last step.
func (p *Progress) Update(done, total int, msg string) {
	if p == nil || p.quiet {
		return
	}
	if !p.tty {
		if done-p.last >= p.every || done == total {
			fmt.Fprintf(p.w, "[%d/%d] %s\n", done, total, msg)
			p.last = done
		}
		return
	}
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	}
	p.bar.Describe(msg)
	p.bar.Set(done)
}
