package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/vision/imageio"
)

// TestDecodeBudgetFlag: --decode-pixels makes one decoding budget of
// that many pixels for the whole command, shared by every decoder it
// hands out (learn's, extract's train and test splits, predict's); -1
// means none.
func TestDecodeBudgetFlag(t *testing.T) {
	c := &cobra.Command{}
	var e extractFlags
	e.register(c)
	if err := c.ParseFlags([]string{"--decode-pixels", "5000"}); err != nil {
		t.Fatal(err)
	}
	a, b := e.decoder(), e.decoder()
	if a.Budget == nil || a.Budget != b.Budget || a.Budget.Max() != 5000 || e.budget() != a.Budget {
		t.Fatalf("decoders' budgets %p %p (max %d), want one of 5000 pixels", a.Budget, b.Budget, a.Budget.Max())
	}
	var none extractFlags
	none.register(&cobra.Command{})
	none.decodePixels = -1
	if none.decoder().Budget != nil {
		t.Fatal("--decode-pixels -1 made a budget")
	}
	var def extractFlags
	d := &cobra.Command{}
	def.register(d)
	if got := def.decoder().Budget.Max(); got != imageio.DefaultBudgetPixels {
		t.Fatalf("default budget %d pixels, want %d", got, imageio.DefaultBudgetPixels)
	}
}
