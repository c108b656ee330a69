// Package fuzzcheck holds oracles the fuzz targets share beyond "does not
// panic". It is imported by tests only.
//
// Bounded memory: a decoder of outside data must not allocate in
// proportion to a length it read before checking that length against the
// bytes actually there (a 4-byte count of 2^31 must not cost 2 GiB).
// HeapAllocs measures what a call allocates; AllocBound fails a test whose
// call allocated more than a budget computed from the input.
//
//	fuzzcheck.AllocBound(t, 16*len(data)+fuzzcheck.Slack, func() {
//		decode(data)
//	})
//
// The measure is the runtime's cumulative heap allocation counter
// (runtime/metrics "/gc/heap/allocs:bytes"): exact for large objects,
// counted a span at a time for small ones, so Slack absorbs the
// rounding. It counts every goroutine's allocations: use it where the
// call runs alone, as a fuzz target's body does in its worker process.
package fuzzcheck
