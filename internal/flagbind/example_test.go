package flagbind_test

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/flycl/flycl/internal/flagbind"
)

// options are a command's settings: each field's flag and help in its
// tags, its default the value it has when it is bound.
type options struct {
	Batch   int       `json:"batch" flag:"batch" help:"samples per mini-batch"`
	Rate    float64   `json:"rate" flag:"rate" help:"learning rate"`
	Verbose bool      `json:"verbose" flag:"verbose" help:"print every step"`
	Grid    []float64 `json:"grid" flag:"grid" help:"values to try"`
	Cache   string    `json:"-" flag:"-"` // no flag
}

// A tagged struct bound to a standard library flag set: parsing writes
// the fields, the flags not given keep the struct's values, and the Set
// knows which flags the user set.
func ExampleSet() {
	o := options{Batch: 32, Rate: 0.5, Grid: []float64{1e6, 0.01}}
	s, err := flagbind.Bind(&o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s.AddToGo(fs)
	for _, v := range s.Values() {
		fmt.Printf("-%s (%s, default %s): %s\n", v.Flag, v.Type(), v.String(), v.Help)
	}

	if err := fs.Parse([]string{"-batch", "64", "-verbose", "-grid", "1,1e-3"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", o)
	fmt.Println("set: batch", s.Changed("batch"), "rate", s.Changed("rate"))

	// a value the field's type refuses: the field keeps its value
	err = fs.Parse([]string{"-batch", "1.5"})
	fmt.Println(err != nil, o.Batch)
	// Output:
	// -batch (int, default 32): samples per mini-batch
	// -rate (float64, default 0.5): learning rate
	// -verbose (bool, default false): print every step
	// -grid (string, default 1e6,0.01): values to try
	// {Batch:64 Rate:0.5 Verbose:true Grid:[1 0.001] Cache:}
	// set: batch true rate false
	// true 64
}

// The same binding on a pflag flag set (cobra's), where a bool flag
// needs NoOptDefVal "true" so that --verbose alone turns it on.
func ExampleSet_Values() {
	o := options{Batch: 32}
	s := flagbind.MustBind(&o)
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	for _, v := range s.Values() {
		f := fs.VarPF(v, v.Flag, "", v.Help)
		if v.IsBool() {
			f.NoOptDefVal = "true"
		}
	}
	if err := fs.Parse([]string{"--verbose", "--rate=0.25"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Batch, o.Rate, o.Verbose, s.Changed("verbose"))
	// Output:
	// 32 0.25 true true
}

// Agree compares the flags the user set with a configuration fixed
// already (a file's), as their flag text: the first that differs is a
// *MismatchError.
func ExampleSet_Agree() {
	var o options
	s := flagbind.MustBind(&o)
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	s.AddToGo(fs)
	if err := fs.Parse([]string{"-grid", "1e6", "-batch", "16"}); err != nil {
		fmt.Println(err)
		return
	}
	file := options{Batch: 8, Rate: 3, Grid: []float64{1000000}} // rate differs, but was not set
	err := s.Agree(file, "the file has")
	var me *flagbind.MismatchError
	fmt.Println(err, errors.As(err, &me) && me.Flag == "batch")
	// Output:
	// --batch 16, but the file has 8 true
}

// Every exported field needs a flag tag (`flag:"-"` leaves it out), so
// that a field added without a flag is an error of Bind.
func ExampleBind() {
	type settings struct {
		Batch int `flag:"batch"`
		Steps int
	}
	_, err := flagbind.Bind(&settings{})
	fmt.Println(errors.Is(err, flagbind.ErrTag))
	fmt.Println(err)
	// Output:
	// true
	// flagbind: cannot bind: settings.Steps has no flag tag (give `flag:"-"` to leave it out)
}
