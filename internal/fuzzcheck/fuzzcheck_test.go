package fuzzcheck

import "testing"

var sink []byte

func TestHeapAllocs(t *testing.T) {
	if got := HeapAllocs(func() { sink = make([]byte, 64<<20) }); got < 64<<20 {
		t.Errorf("a 64 MiB allocation measured as %d bytes", got)
	}
	small := HeapAllocs(func() {
		for range 1000 {
			sink = make([]byte, 100)
		}
	})
	if small < 50_000 || small > Slack {
		t.Errorf("1000 allocations of 100 bytes measured as %d bytes", small)
	}
}
