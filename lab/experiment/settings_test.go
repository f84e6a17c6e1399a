package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/lab/protocol"
)

func TestProtocolSettingsCheck(t *testing.T) {
	ok := ProtocolSettings{Tasks: 10, Seeds: "1993", Order: "flycl"}
	for _, c := range []struct {
		name string
		edit func(*ProtocolSettings)
		err  string
	}{
		{"defaults", func(*ProtocolSettings) {}, ""},
		{"one task", func(s *ProtocolSettings) { s.Tasks = 1 }, ""},
		{"no tasks", func(s *ProtocolSettings) { s.Tasks = 0 }, "--tasks 0"},
		{"split", func(s *ProtocolSettings) { s.Init, s.Increment, s.InitGiven, s.IncrementGiven = 5, 1, true, true }, ""},
		{"init alone", func(s *ProtocolSettings) { s.Init, s.InitGiven = 5, true }, "go together (--init 5 --increment 0)"},
		{"increment alone", func(s *ProtocolSettings) { s.Increment, s.IncrementGiven = 2, true }, "go together"},
		{"init zero given", func(s *ProtocolSettings) { s.InitGiven, s.Increment, s.IncrementGiven = true, 2, true }, "--init 0"},
		{"increment zero given", func(s *ProtocolSettings) { s.Init, s.InitGiven, s.IncrementGiven = 2, true, true }, "--increment 0"},
		{"zero split not given", func(s *ProtocolSettings) {}, ""},
		{"tasks before split", func(s *ProtocolSettings) { s.Tasks, s.InitGiven = 0, true }, "--tasks 0"},
		{"train per class", func(s *ProtocolSettings) { s.TrainPerClass = 7 }, ""},
		{"negative train per class", func(s *ProtocolSettings) { s.TrainPerClass = -1 }, "--train-per-class -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := ok
			c.edit(&s)
			err := s.Check()
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Check() = %v, want %q", err, c.err)
			}
		})
	}
}

func TestProtocolSettingsProtocol(t *testing.T) {
	for _, c := range []struct {
		seeds, order string
		classes      int
		wantSeeds    []int64
		wantOrder    protocol.Order
		wantList     []int
		err          string
	}{
		{"1993", "flycl", 10, []int64{1993}, protocol.OrderFlyCL, nil, ""},
		{"1, 2 ,-3", "pilot", 10, []int64{1, 2, -3}, protocol.OrderPILOT, nil, ""},
		{"9223372036854775807", "none", 3, []int64{1<<63 - 1}, protocol.OrderNone, nil, ""},
		{"1", "2,0,1", 3, []int64{1}, "list", []int{2, 0, 1}, ""},
		{"1,x", "flycl", 3, nil, "", nil, `--seeds: "x" is not an integer`},
		{"", "flycl", 3, nil, "", nil, `--seeds: "" is not an integer`},
		{"1", "0,0,1", 3, nil, "", nil, "0"},
		{"1", "shuffle", 3, nil, "", nil, "shuffle"},
	} {
		t.Run(c.seeds+"/"+c.order, func(t *testing.T) {
			s := ProtocolSettings{Tasks: 2, Init: 1, Increment: 1, TrainPerClass: 4, Seeds: c.seeds, Order: c.order}
			p, err := s.Protocol(c.classes)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Seeds, c.wantSeeds) || !slices.Equal(p.List, c.wantList) || p.Order != c.wantOrder {
				t.Fatalf("seeds %v order %v list %v, want %v %v %v", p.Seeds, p.Order, p.List, c.wantSeeds, c.wantOrder, c.wantList)
			}
			if p.Tasks != 2 || p.Init != 1 || p.Increment != 1 || p.TrainPerClass != 4 {
				t.Fatalf("sizes %+v not carried", p)
			}
		})
	}
}
