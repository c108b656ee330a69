package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wardenzk/warden/internal/bench"
)

// TestPIDList: --server-pid takes one pid, as it always has, or one per
// ensemble member separated by commas.
func TestPIDList(t *testing.T) {
	tests := []struct {
		arg  string
		want []int
		bad  bool
	}{
		{"4242", []int{4242}, false},
		{"101,102,103", []int{101, 102, 103}, false},
		{" 7 , 8 ", []int{7, 8}, false},
		{"", nil, false},
		{"12,x", nil, true},
		{"0", nil, true},
		{"5,-3", nil, true},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.arg), func(t *testing.T) {
			var l pidList
			err := l.Set(tt.arg)
			if (err != nil) != tt.bad {
				t.Fatalf("Set(%q) error %v, want error %v", tt.arg, err, tt.bad)
			}
			if !tt.bad && !slices.Equal(l, tt.want) {
				t.Errorf("Set(%q) = %v, want %v", tt.arg, l, tt.want)
			}
		})
	}
}

// TestBenchServerPIDs: the pids given to `warden bench --server-pid` are
// the ones its result records (through the fsync workload, which needs
// no server: three writes), and a bad list is a usage error.
func TestBenchServerPIDs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "result.json")
	self := strconv.Itoa(os.Getpid())
	code, _, errs := run("bench", "--workload", "fsync", "--dir", dir, "--ops", "3", "--payload", "100",
		"--server-pid", self+","+self, "--json", out)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r bench.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if want := []int{os.Getpid(), os.Getpid()}; !slices.Equal(r.Settings.ServerPIDs, want) {
		t.Errorf("result's server pids %v, want %v", r.Settings.ServerPIDs, want)
	}
	if len(r.Phases) != 1 || r.Phases[0].Name != "fdatasync" || r.Phases[0].Ops != 3 {
		t.Errorf("phases %+v, want one fdatasync phase of 3 writes", r.Phases)
	}
	code, _, errs = run("bench", "--workload", "fsync", "--server-pid", "1,two")
	if code != 2 || !strings.Contains(errs, "server-pid") {
		t.Errorf("bad --server-pid: exit %d, stderr %q; want 2 and the flag named", code, errs)
	}
}
