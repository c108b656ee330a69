package tree

import (
	"testing"
	"unsafe"
)

// A million znodes hold a million nodes: the struct must stay in Go's
// 80-byte size class.
func TestNodeIs80Bytes(t *testing.T) {
	if s := unsafe.Sizeof(node{}); s != 80 {
		t.Fatalf("node is %d bytes, want 80", s)
	}
}

func TestNodeDataKeepsNilEmptyAndBytes(t *testing.T) {
	var n node
	for _, tc := range []struct {
		in   []byte
		size int
	}{{nil, 0}, {[]byte{}, 0}, {[]byte("abc"), 3}} {
		n.setData(tc.in)
		got := n.data()
		if (got == nil) != (tc.in == nil) || string(got) != string(tc.in) || n.dataSize() != tc.size {
			t.Fatalf("setData(%#v): data %#v, size %d", tc.in, got, n.dataSize())
		}
	}
}
