package checker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Shorthands for register operations on key "/r" by client c.
func write(c int, v int64, s Span, o Outcome) RegisterOp {
	return RegisterOp{Client: c, Key: "/r", Kind: RegWrite, Value: v, Span: s, Outcome: o}
}

func cas(c int, ver int32, v int64, s Span, o Outcome) RegisterOp {
	return RegisterOp{Client: c, Key: "/r", Kind: RegCAS, Value: v, Version: ver, Span: s, Outcome: o}
}

func read(c int, v int64, ver int32, s Span) RegisterOp {
	return RegisterOp{Client: c, Key: "/r", Kind: RegRead, Value: v, Version: ver, Span: s, Outcome: OK}
}

// on moves ops to another key.
func on(key string, ops ...RegisterOp) []RegisterOp {
	for i := range ops {
		ops[i].Key = key
	}
	return ops
}

func TestCheckRegisters(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []RegisterOp
		v    verdict
	}{
		{"empty", nil, pass},
		{"sequential write, cas, failed cas, reads", []RegisterOp{
			read(0, 0, 0, sp(0, 5)),
			write(0, 1, sp(10, 20), OK),
			read(1, 1, 1, sp(30, 40)),
			cas(1, 1, 2, sp(50, 60), OK),
			read(0, 2, 2, sp(70, 80)),
			cas(0, 1, 3, sp(90, 100), Failed),
			read(1, 2, 2, sp(110, 120)),
		}, pass},
		{"concurrent write seen by a later read only", []RegisterOp{
			write(0, 1, sp(0, 100), OK),
			read(1, 0, 0, sp(10, 20)),
			read(1, 1, 1, sp(30, 40)),
			read(2, 1, 1, sp(50, 60)),
		}, pass},
		{"dropped: failed write, failed and unknown reads", []RegisterOp{
			write(0, 9, sp(0, 10), Failed),
			{Client: 1, Key: "/r", Kind: RegRead, Value: 7, Version: 7, Span: sp(20, 30), Outcome: Unknown},
			{Client: 1, Key: "/r", Kind: RegRead, Value: 8, Version: 8, Span: sp(40, 50), Outcome: Failed},
			read(2, 0, 0, sp(60, 70)),
		}, pass},
		{"unknown write took effect", []RegisterOp{
			write(0, 5, sp(0, 10), Unknown),
			read(1, 5, 1, sp(20, 30)),
		}, pass},
		{"unknown write took effect after its client gave up", []RegisterOp{
			write(0, 5, sp(0, 10), Unknown),
			read(1, 0, 0, sp(20, 30)),
			read(1, 5, 1, sp(40, 50)),
		}, pass},
		{"unknown write did not take effect", []RegisterOp{
			write(0, 5, sp(0, 10), Unknown),
			read(1, 0, 0, sp(20, 30)),
			write(1, 6, sp(40, 50), OK),
			read(1, 6, 1, sp(60, 70)),
		}, pass},
		{"unknown cas took effect", []RegisterOp{
			write(0, 1, sp(0, 10), OK),
			cas(0, 1, 7, sp(20, 30), Unknown),
			read(1, 7, 2, sp(40, 50)),
		}, pass},
		{"unknown cas did not take effect, version moved on", []RegisterOp{
			write(0, 1, sp(0, 10), OK),
			cas(0, 1, 7, sp(20, 30), Unknown),
			write(1, 8, sp(40, 50), OK),
			read(1, 8, 2, sp(60, 70)),
		}, pass},
		{"unknown cas did not take effect, version still matches", []RegisterOp{
			write(0, 1, sp(0, 10), OK),
			cas(0, 1, 7, sp(20, 30), Unknown),
			read(1, 1, 1, sp(40, 50)),
		}, pass},
		{"unknown cas with a stale version", []RegisterOp{
			cas(0, 3, 7, sp(0, 10), Unknown),
			read(1, 0, 0, sp(20, 30)),
		}, pass},
		{"keys are independent", append(
			on("/a", write(0, 1, sp(0, 10), OK), read(1, 1, 1, sp(20, 30))),
			on("/b", read(1, 0, 0, sp(20, 30)), write(0, 2, sp(40, 50), OK), read(1, 2, 1, sp(60, 70)))...),
			pass},

		{"stale read", []RegisterOp{
			write(0, 1, sp(0, 10), OK),
			read(1, 0, 0, sp(20, 30)),
		}, fail("/r", "/r: not linearizable (2 ops)")},
		{"lost acknowledged write", []RegisterOp{
			write(0, 1, sp(0, 10), OK),
			write(1, 2, sp(20, 30), OK),
			read(2, 2, 1, sp(40, 50)),
		}, fail("/r", "not linearizable")},
		{"cas succeeded twice on one version", []RegisterOp{
			write(0, 1, sp(0, 10), OK),
			cas(0, 1, 2, sp(20, 30), OK),
			cas(1, 1, 3, sp(40, 50), OK),
		}, fail("/r", "not linearizable")},
		{"concurrent cas both succeeded on one version", []RegisterOp{
			cas(0, 0, 2, sp(0, 30), OK),
			cas(1, 0, 3, sp(10, 40), OK),
		}, fail("/r", "not linearizable")},
		{"cas failed although the version matched", []RegisterOp{
			write(0, 1, sp(0, 10), OK),
			cas(1, 1, 2, sp(20, 30), Failed),
		}, fail("/r", "not linearizable")},
		{"read a value never written", []RegisterOp{
			read(0, -1, 1, sp(0, 10)),
		}, fail("/r", "not linearizable")},
		{"unknown write seen, then unseen", []RegisterOp{
			write(0, 5, sp(0, 10), Unknown),
			read(1, 5, 1, sp(20, 30)),
			read(1, 0, 0, sp(40, 50)),
		}, fail("/r", "not linearizable")},
		{"two unknown cas on one version both took effect", []RegisterOp{
			cas(0, 0, 1, sp(0, 10), Unknown),
			cas(1, 0, 2, sp(0, 10), Unknown),
			read(2, 1, 1, sp(20, 30)),
			read(2, 2, 2, sp(40, 50)),
		}, fail("/r", "not linearizable")},
		{"only the bad key is named", append(
			on("/b", write(0, 1, sp(0, 10), OK), read(1, 0, 0, sp(20, 30))),
			on("/a", write(0, 1, sp(0, 10), OK), read(1, 1, 1, sp(20, 30)))...),
			fail("/b", "/b: not linearizable")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := CheckRegisters(tc.ops, 10*time.Second, "")
			tc.v.check(t, r, "registers")
			if r.Visualization != "" {
				t.Errorf("Visualization = %q without a vizDir", r.Visualization)
			}
		})
	}
}

func TestCheckRegistersVisualization(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "viz")
	ops := append(
		on("/torture/k1", write(0, 1, sp(0, 10), OK), read(1, 0, 0, sp(20, 30))),
		on("/torture/k2", write(0, 1, sp(0, 10), OK), read(1, 1, 1, sp(20, 30)))...)
	r := CheckRegisters(ops, 10*time.Second, dir)
	fail("/torture/k1", "not linearizable").check(t, r, "registers")
	want := filepath.Join(dir, "registers-torture_k1.html")
	if r.Visualization != want {
		t.Fatalf("Visualization = %q, want %q (notes %q)", r.Visualization, want, r.Notes)
	}
	html, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<html", "write 1", "read 0 v0"} {
		if !strings.Contains(string(html), s) {
			t.Errorf("visualization lacks %q", s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "registers-torture_k2.html")); !os.IsNotExist(err) {
		t.Errorf("a linearizable key was drawn (stat: %v)", err)
	}
}

// TestCheckRegistersTimeout: a history porcupine cannot settle quickly
// (30 concurrent writes, then a read no order of them explains) is
// inconclusive, and inconclusive is not OK.
func TestCheckRegistersTimeout(t *testing.T) {
	var ops []RegisterOp
	for c := range 30 {
		ops = append(ops, write(c, int64(c+1), sp(0, 1000), OK))
	}
	ops = append(ops, read(30, 1, 31, sp(2000, 3000)))
	r := CheckRegisters(ops, 20*time.Millisecond, t.TempDir())
	fail("/r", "/r: inconclusive: porcupine timed out after 20ms").check(t, r, "registers")
	if r.Visualization != "" {
		t.Errorf("Visualization = %q for an inconclusive check", r.Visualization)
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"/torture/k3":  "torture_k3",
		"/a b//c":      "a_b_c",
		"/":            "root",
		"/x-1.y_z/":    "x-1.y_z",
		"/é/../secret": ".._secret",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}
