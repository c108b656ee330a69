package torture

import (
	"reflect"
	"testing"

	"github.com/wardenzk/warden/test/torture/checker"
)

// A seed gives the same schedule every time (what makes a failing seed
// reproducible), every enabled kind once, and another seed another order.
func TestScheduleIsSeeded(t *testing.T) {
	a := Schedule(42, 5, AllFaults)
	if !reflect.DeepEqual(a, Schedule(42, 5, AllFaults)) {
		t.Fatal("the same seed gave two schedules")
	}
	seen := map[FaultKind]int{}
	for _, f := range a {
		seen[f.Kind]++
		if f.Hold <= 0 || f.Quiet <= 0 || len(f.Perm) != 5 {
			t.Errorf("bad step %+v", f)
		}
	}
	for _, k := range AllFaults {
		if seen[k] != 1 {
			t.Errorf("%s appears %d times, want once", k, seen[k])
		}
	}
	differs := false
	for seed := uint64(1); seed <= 5 && !differs; seed++ {
		differs = !reflect.DeepEqual(a, Schedule(seed, 5, AllFaults))
	}
	if !differs {
		t.Error("seeds 1-5 all gave seed 42's schedule")
	}
}

func TestParseFaults(t *testing.T) {
	all, err := ParseFaults("all")
	if err != nil || len(all) != len(AllFaults) {
		t.Fatalf("all: %v %v", all, err)
	}
	two, err := ParseFaults("pause, wipe")
	if err != nil || !reflect.DeepEqual(two, []FaultKind{Pause, Wipe}) {
		t.Fatalf("pause, wipe: %v %v", two, err)
	}
	if _, err := ParseFaults("pause,reboot"); err == nil {
		t.Fatal("an unknown fault was accepted")
	}
}

// Unavailability is measured from the moment a fault is in effect to the
// first acknowledged write invoked after it; writes invoked before, and
// failed or unknown ones, do not end it.
func TestUnavailability(t *testing.T) {
	ms := int64(1e6)
	faults := []injection{
		{Fault: Fault{Kind: KillLeader}, At: 100 * ms},
		{Fault: Fault{Kind: Pause}, At: 1000 * ms},
		{Fault: Fault{Kind: KillLeader}, At: 2000 * ms},
	}
	ws := []write{
		{checker.Span{Call: 90 * ms, Return: 101 * ms}, checker.OK},       // invoked before the fault
		{checker.Span{Call: 110 * ms, Return: 400 * ms}, checker.Unknown}, // not acknowledged
		{checker.Span{Call: 120 * ms, Return: 350 * ms}, checker.OK},      // the first: 250 ms
		{checker.Span{Call: 130 * ms, Return: 360 * ms}, checker.OK},
		{checker.Span{Call: 1005 * ms, Return: 1010 * ms}, checker.OK}, // 10 ms
		{checker.Span{Call: 2001 * ms, Return: 2050 * ms}, checker.OK}, // 50 ms: kill-leader keeps its longest
	}
	got := unavailability(faults, ws, 5000*ms)
	want := map[string]int{"kill-leader": 250, "pause": 10}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("unavailability %v, want %v", got, want)
	}
	// No acknowledged write after a fault: unavailable to the end.
	if got := unavailability(faults[:1], ws[:2], 5000*ms); got["kill-leader"] != 4900 {
		t.Fatalf("with no write acknowledged after the fault: %v", got)
	}
}
