package cli

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
	var e ExtractFlags
	e.Register(c)
	if err := c.ParseFlags([]string{"--decode-pixels", "5000"}); err != nil {
		t.Fatal(err)
	}
	a, b := e.Decoder(), e.Decoder()
	if a.Budget == nil || a.Budget != b.Budget || a.Budget.Max() != 5000 || e.Budget() != a.Budget {
		t.Fatalf("decoders' budgets %p %p (max %d), want one of 5000 pixels", a.Budget, b.Budget, a.Budget.Max())
	}
	var none ExtractFlags
	none.Register(&cobra.Command{})
	none.DecodePixels = -1
	if none.Decoder().Budget != nil {
		t.Fatal("--decode-pixels -1 made a budget")
	}
	var def ExtractFlags
	d := &cobra.Command{}
	def.Register(d)
	if got := def.Decoder().Budget.Max(); got != imageio.DefaultBudgetPixels {
		t.Fatalf("default budget %d pixels, want %d", got, imageio.DefaultBudgetPixels)
	}
}
