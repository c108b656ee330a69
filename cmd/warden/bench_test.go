package main

import (
	"slices"
	"strconv"
	"testing"
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
