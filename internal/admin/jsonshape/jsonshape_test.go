package jsonshape

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDiff(t *testing.T) {
	dataMaps := map[string]bool{"c.sessions": true}
	nullError := func(path string) bool { return strings.HasSuffix(path, ".error") }
	tests := []struct {
		name, zk, wd string
		want         []string
	}{
		{"same shape, other values", `{"a":1,"b":"x","l":[1,2]}`, `{"a":7,"b":"y","l":[3]}`, nil},
		{"missing and extra keys", `{"a":1,"b":2}`, `{"b":2,"c":3}`,
			[]string{"c.a: only in ZooKeeper", "c.c: only in Warden"}},
		{"type differs", `{"a":1}`, `{"a":"1"}`, []string{"c.a: ZooKeeper number, Warden string"}},
		{"nested", `{"o":{"x":true}}`, `{"o":{"x":null}}`, []string{"c.o.x: ZooKeeper boolean, Warden null"}},
		{"null error matches", `{"error":null}`, `{"error":"failed"}`, nil},
		{"array emptiness", `{"l":[1]}`, `{"l":[]}`, []string{"c.l: ZooKeeper 1 elements, Warden 0"}},
		{"array elements", `{"l":[{"k":1}]}`, `{"l":[{"k":"v"}]}`, []string{"c.l[].k: ZooKeeper number, Warden string"}},
		{"data map keys ignored", `{"sessions":{"0x1":["/a"]}}`, `{"sessions":{"0x9":["/b"]}}`, nil},
		{"data map counts and values", `{"sessions":{"0x1":["/a"],"0x2":[]}}`, `{"sessions":{"0x9":"x"}}`,
			[]string{"c.sessions: ZooKeeper 2 entries, Warden 1", "c.sessions[]: ZooKeeper array, Warden string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff("c", decode(t, tt.zk), decode(t, tt.wd), Options{DataMaps: dataMaps, NullMatches: nullError})
			if !slices.Equal(got, tt.want) {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
		})
	}
	if got := Diff("c", decode(t, `{"error":null}`), decode(t, `{"error":"x"}`), Options{}); len(got) != 1 {
		t.Errorf("without NullMatches a null error must differ: %q", got)
	}
}
