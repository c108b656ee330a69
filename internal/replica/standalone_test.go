package replica

import (
	"fmt"
	"sync"
	"testing"
)

func TestStandaloneAppliesInProposalOrder(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var indexes []uint64
	r := NewStandalone(func(index, term uint64, data []byte) {
		if term != standaloneTerm {
			t.Errorf("term = %d, want %d", term, standaloneTerm)
		}
		mu.Lock()
		got = append(got, string(data))
		indexes = append(indexes, index)
		mu.Unlock()
	})
	const n = 1000
	for i := 0; i < n; i++ {
		if err := r.Propose([]byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	r.Stop()
	if len(got) != n {
		t.Fatalf("applied %d entries, want %d", len(got), n)
	}
	for i := range got {
		if got[i] != fmt.Sprint(i) || indexes[i] != uint64(i+1) {
			t.Fatalf("entry %d = %q at index %d", i, got[i], indexes[i])
		}
	}
	if err := r.Propose([]byte("late")); err != ErrStopped {
		t.Fatalf("Propose after Stop = %v, want ErrStopped", err)
	}
}
