package main

import (
	"strings"
	"testing"

	"github.com/flycl/flycl/app/locate"
)

// TestHelpEnvironment lists every variable the resolver reads.
func TestHelpEnvironment(t *testing.T) {
	help := environmentHelp().Long
	for _, s := range locate.Settings() {
		if !strings.Contains(help, s.Env) {
			t.Errorf("flycl help environment does not list %s", s.Env)
		}
	}
}
