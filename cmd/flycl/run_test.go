package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfigFileAndFlagPrecedence(t *testing.T) {
	c := runCmd()
	cfg := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(cfg, []byte(`{"tasks": 5, "seeds": [1, 2, 3], "order": "pilot", "m": 2000}`), 0o644)
	if err := c.Flags().Parse([]string{"--config", cfg, "--m", "3000"}); err != nil {
		t.Fatal(err)
	}
	if err := applyConfig(c.Flags(), cfg); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"tasks": "5", "seeds": "1,2,3", "order": "pilot", "m": "3000"} {
		if got := c.Flags().Lookup(name).Value.String(); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	os.WriteFile(cfg, []byte(`{"taskz": 5}`), 0o644)
	if err := applyConfig(c.Flags(), cfg); err == nil {
		t.Error("unknown setting: no error")
	}
	os.WriteFile(cfg, []byte(`{"tasks": "five"}`), 0o644)
	if err := applyConfig(runCmd().Flags(), cfg); err == nil {
		t.Error("bad value: no error")
	}
}
