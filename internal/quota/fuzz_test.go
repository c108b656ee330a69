package quota

import (
	"errors"
	"maps"
	"testing"
)

// FuzzParse parses arbitrary quota node text (a client may write any data
// to /zookeeper/quota/...): errors wrap ErrSyntax, and what parses writes
// back (Bytes, in StatsTrack.toString's form) to text that parses to the
// same limits.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"count=10,bytes=100", "count=-1,bytes=-1=;byteHardLimit=5;countHardLimit=2", "count=,bytes=", ",count=1", "a=1=2;;,b=3,,", "=5", "count=99999999999999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("%q: error without ErrSyntax: %v", data, err)
			}
			return
		}
		text := s.Bytes()
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("%q writes back as %q, which does not parse: %v", data, text, err)
		}
		want := maps.Clone(s)
		want[KeyCount], want[KeyBytes] = s.Get(KeyCount), s.Get(KeyBytes)
		if !maps.Equal(back, want) {
			t.Fatalf("%q writes back as %q: %v, want %v", data, text, back, want)
		}
	})
}
