package watch

// Change is a debounced change of the top class.
type Change struct {
	From  string // the class before ("" for the first one)
	To    string // the new class
	Since int    // the frame where the new class's run began
	Frame int    // the frame that confirmed it (the run's n-th)
}

// Debouncer turns a sequence of per-frame answers into changes: a new
// answer becomes the current one when it stays for n frames in a row.
// The zero value is not usable; make one with NewDebouncer.
type Debouncer struct {
	n       int
	current string
	has     bool
	cand    string
	since   int
	run     int
}

// NewDebouncer returns a Debouncer that confirms an answer after n
// consecutive frames (n < 1 is taken as 1: every change counts).
func NewDebouncer(n int) *Debouncer { return &Debouncer{n: max(n, 1)} }

// Current returns the confirmed answer (ok false before the first).
func (d *Debouncer) Current() (answer string, ok bool) { return d.current, d.has }

// Observe takes frame's answer and reports a change when this frame
// confirms one.
func (d *Debouncer) Observe(frame int, answer string) (Change, bool) {
	if d.has && answer == d.current {
		d.run = 0 // back to the current answer: a pending candidate is gone
		return Change{}, false
	}
	if d.run == 0 || answer != d.cand {
		d.cand, d.since, d.run = answer, frame, 0
	}
	d.run++
	if d.run < d.n {
		return Change{}, false
	}
	c := Change{From: d.current, To: answer, Since: d.since, Frame: frame}
	d.current, d.has, d.run = answer, true, 0
	return c, true
}
