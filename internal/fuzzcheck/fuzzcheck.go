package fuzzcheck

import (
	"runtime/metrics"
	"testing"
)

// Slack is the allocation, in bytes, every budget should allow on top of
// what the input justifies: buffered readers, maps, the rounding of the
// measure.
const Slack = 4 << 20

const allocsMetric = "/gc/heap/allocs:bytes"

func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: allocsMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// HeapAllocs returns the bytes allocated on the heap while fn ran.
func HeapAllocs(fn func()) uint64 {
	before := heapAllocated()
	fn()
	return heapAllocated() - before
}

// AllocBound runs fn and fails t when it allocated more than limit bytes.
func AllocBound(t testing.TB, limit int, fn func()) {
	t.Helper()
	if got := HeapAllocs(fn); got > uint64(limit) {
		t.Fatalf("allocated %d bytes, more than the %d the input justifies", got, limit)
	}
}
