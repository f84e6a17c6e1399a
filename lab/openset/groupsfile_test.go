package openset

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestImageNet500GroupsRegenerate: the built-in grouping is what its
// documented command writes from WordNet 3.0 (Debian's wordnet-base,
// which .ci/run installs) and the photos of ../shared, byte for byte, so
// the file cannot drift from its source. Skipped, with the reason, where
// python3, WordNet or ../shared is absent.
func TestImageNet500GroupsRegenerate(t *testing.T) {
	photos := filepath.Join("..", "..", "..", "shared", "data", "imagenet-sample-500")
	wordnet := "/usr/share/wordnet"
	if _, err := os.Stat(photos); err != nil {
		t.Skipf("../shared's ImageNet sample is absent: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wordnet, "data.noun")); err != nil {
		t.Skipf("WordNet 3.0 is absent (apt-get install wordnet-base): %v", err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is absent")
	}
	out, err := exec.Command("python3", filepath.Join("..", "..", "scripts", "imagenet-groups"), photos, wordnet).Output()
	if err != nil {
		t.Fatalf("scripts/imagenet-groups: %v", err)
	}
	if string(out) != ImageNet500Groups {
		t.Fatalf("lab/openset/data/imagenet500-groups.tsv differs from what scripts/imagenet-groups writes (%d against %d bytes): regenerate it", len(ImageNet500Groups), len(out))
	}
}
