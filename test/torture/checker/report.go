package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxAnomalies bounds Result.Anomalies; past it, one more line says how
// many were left out.
const maxAnomalies = 20

// anomaly is one finding before it is sorted into a Result.
type anomaly struct {
	key  string // the register, element, path or token it concerns
	sort string // what anomalies sort by before msg: key, unless addSorted
	msg  string // one line, naming the key itself
}

// findings collects a checker's anomalies and notes.
type findings struct {
	anomalies []anomaly
	notes     []string
}

// add records an anomaly about key.
func (f *findings) add(key, format string, args ...any) {
	f.addSorted(key, key, format, args...)
}

// addSorted records an anomaly about key that sorts as sort (for keys
// that do not sort as strings, such as numbers).
func (f *findings) addSorted(sort, key, format string, args ...any) {
	f.anomalies = append(f.anomalies, anomaly{key: key, sort: sort, msg: fmt.Sprintf(format, args...)})
}

// note records an informational line.
func (f *findings) note(format string, args ...any) {
	f.notes = append(f.notes, fmt.Sprintf(format, args...))
}

// result sorts the findings into a Result: anomalies by sort key, then text,
// without repeats, at most maxAnomalies lines plus one "... and N more".
func (f *findings) result(workload string, ops int) Result {
	as := slices.Clone(f.anomalies)
	slices.SortFunc(as, func(a, b anomaly) int {
		if c := strings.Compare(a.sort, b.sort); c != 0 {
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
	as = slices.Compact(as)
	r := Result{Workload: workload, OK: len(as) == 0, Ops: ops, Notes: f.notes}
	for i, a := range as {
		if i == maxAnomalies {
			r.Anomalies = append(r.Anomalies, fmt.Sprintf("... and %d more", len(as)-maxAnomalies))
			break
		}
		r.Anomalies = append(r.Anomalies, a.msg)
	}
	if len(as) > 0 {
		r.Key = as[0].key
	}
	return r
}

// at renders a time of the run (ns since it began) for a message.
func at(ns int64) string { return time.Duration(ns).String() }

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// outcomeRank orders outcomes by how much they promise: OK (took
// effect) over Unknown (may have) over Failed (did not). Several
// attempts at one element take the strongest promise among them.
func outcomeRank(o Outcome) int {
	switch o {
	case OK:
		return 2
	case Unknown:
		return 1
	default:
		return 0
	}
}

// members lists the final reads' member names in order and says whether
// there are any: a check against no final read would pass vacuously.
func members(final map[string][]string, f *findings, what string) []string {
	ms := sortedKeys(final)
	if len(ms) == 0 {
		f.add("", "no member's final read of the %s to check against", what)
	}
	return ms
}

// presence maps each listed name to the members listing it, reporting a
// member that lists one name twice.
func presence(final map[string][]string, ms []string, f *findings) map[string][]string {
	on := make(map[string][]string)
	for _, m := range ms {
		seen := make(map[string]bool, len(final[m]))
		for _, name := range final[m] {
			if seen[name] {
				f.add(name, "%s: member %s lists it twice", name, m)
				continue
			}
			seen[name] = true
			on[name] = append(on[name], m)
		}
	}
	return on
}

// missing returns the members of ms (sorted) not in some (sorted).
func missing(ms, some []string) []string {
	var out []string
	for _, m := range ms {
		if _, ok := slices.BinarySearch(some, m); !ok {
			out = append(out, m)
		}
	}
	return out
}
