package quota

import (
	"errors"
	"testing"
)

// TestParse pins down StatsTrack's reading and rendering of quota text,
// including the inputs ZooKeeper throws on.
func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		null bool
		want string // "" = Parse fails
	}{
		{in: "", want: "count=-1,bytes=-1"},
		{in: "count=1,bytes=2", want: "count=1,bytes=2"},
		{in: "count=2,bytes=-1=;byteHardLimit=-1;countHardLimit=-1", want: "count=2,bytes=-1=;byteHardLimit=-1;countHardLimit=-1"},
		{in: "countHardLimit=3;count=1;bytes=2,,;;", want: "count=1,bytes=2=;countHardLimit=3"},
		{in: "count==5", want: "count=-1,bytes=-1"},
		{in: "count=1,count=+7", want: "count=7,bytes=-1"},
		{in: "=5", want: "count=-1,bytes=-1=;=5"},
		{in: ",,,", want: "count=-1,bytes=-1"},
		{in: ",count=1"},
		{in: "count="},
		{in: "count"},
		{in: "count=1x"},
		{in: "count=99999999999999999999"},
		{null: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			data := []byte(tc.in)
			if tc.null {
				data = nil
			}
			s, err := Parse(data)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("parsed as %q, want failure", s)
				}
				if !errors.Is(err, ErrSyntax) {
					t.Fatalf("error %v does not wrap ErrSyntax", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	if got := LimitsPath("/a/b"); got != "/zookeeper/quota/a/b/zookeeper_limits" {
		t.Errorf("LimitsPath = %q", got)
	}
	if got := StatsPath("/a"); got != "/zookeeper/quota/a/zookeeper_stats" {
		t.Errorf("StatsPath = %q", got)
	}
}
