package main

import (
	"testing"

	"github.com/flycl/flycl/cmd/internal/clitest"
)

// TestEveryCommandHasEveryConfigFlag: every command that takes Fly-CL's
// configuration has a flag for every field of flycl.Config, with its help
// and default (clitest.ConfigFlags); run and sweep are among them.
// export-w draws W and learns nothing: it takes W's fields only (m, p and
// the seed; TestConfigFlagsFromTheSchema checks their help).
func TestEveryCommandHasEveryConfigFlag(t *testing.T) {
	clitest.ConfigFlags(t, newRoot(), map[string]bool{"flycl-lab export-w": true}, "flycl-lab run", "flycl-lab sweep")
}

// TestConfigFlagsFromTheSchema: a flag of any command named as a field
// of flycl.Config is that field's, bound from the schema
// (clitest.SchemaFlags). The exceptions are bench camera's and bench
// dual's --m, lists of m values to compare.
func TestConfigFlagsFromTheSchema(t *testing.T) {
	clitest.SchemaFlags(t, newRoot(), map[string]bool{"flycl-lab bench camera --m": true, "flycl-lab bench dual --m": true})
}
