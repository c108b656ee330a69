package checker

import (
	"fmt"
	"strings"
	"testing"
)

// sp is a Span from call to return.
func sp(call, ret int64) Span { return Span{Call: call, Return: ret} }

// verdict is what a test expects of a Result: OK, or an anomaly
// containing want about key.
type verdict struct {
	ok   bool
	key  string // Result.Key when !ok ("" to skip)
	want string // a substring of some anomaly when !ok
}

// pass is the verdict of a history without anomalies.
var pass = verdict{ok: true}

// fail expects an anomaly about key mentioning want.
func fail(key, want string) verdict { return verdict{key: key, want: want} }

// check compares r with v, printing r when they differ.
func (v verdict) check(t *testing.T, r Result, workload string) {
	t.Helper()
	if r.Workload != workload {
		t.Errorf("Workload = %q, want %q", r.Workload, workload)
	}
	if r.OK != (len(r.Anomalies) == 0) {
		t.Errorf("OK = %v with %d anomalies", r.OK, len(r.Anomalies))
	}
	if v.ok {
		if !r.OK || r.Key != "" {
			t.Errorf("want OK, got key %q, anomalies:\n%s", r.Key, strings.Join(r.Anomalies, "\n"))
		}
		return
	}
	if r.OK {
		t.Fatalf("want an anomaly mentioning %q, got OK (notes %q)", v.want, r.Notes)
	}
	if v.key != "" && r.Key != v.key {
		t.Errorf("Key = %q, want %q", r.Key, v.key)
	}
	for _, a := range r.Anomalies {
		if strings.Contains(a, v.want) {
			return
		}
	}
	t.Errorf("no anomaly mentions %q:\n%s", v.want, strings.Join(r.Anomalies, "\n"))
}

func TestResultSortsAndTruncates(t *testing.T) {
	var f findings
	for i := 24; i >= 0; i-- {
		k := fmt.Sprintf("k%02d", i)
		f.add(k, "%s: bad", k)
	}
	f.add("k03", "k03: bad") // a repeat is said once
	r := f.result("w", 7)
	if r.OK || r.Ops != 7 || r.Workload != "w" || r.Key != "k00" {
		t.Fatalf("got %+v", r)
	}
	if len(r.Anomalies) != maxAnomalies+1 {
		t.Fatalf("%d lines, want %d", len(r.Anomalies), maxAnomalies+1)
	}
	if r.Anomalies[0] != "k00: bad" || r.Anomalies[19] != "k19: bad" || r.Anomalies[20] != "... and 5 more" {
		t.Errorf("lines: %q", r.Anomalies)
	}
}
