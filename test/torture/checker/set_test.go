package checker

import "testing"

func TestCheckSet(t *testing.T) {
	add := func(el string, o Outcome) SetAdd { return SetAdd{Client: 1, Element: el, Span: sp(10, 20), Outcome: o} }
	adds := []SetAdd{add("a", OK), add("b", OK), add("u", Unknown), add("f", Failed)}
	for _, tc := range []struct {
		name  string
		adds  []SetAdd
		final map[string][]string
		v     verdict
	}{
		{"unknown add absent everywhere", adds, map[string][]string{
			"m1": {"a", "b"}, "m2": {"b", "a"}, "m3": {"a", "b"},
		}, pass},
		{"unknown add present everywhere", adds, map[string][]string{
			"m1": {"a", "b", "u"}, "m2": {"u", "b", "a"},
		}, pass},
		{"an element added twice, once ok", append(adds, add("b", Failed), add("f", OK)), map[string][]string{
			"m1": {"a", "b", "f"},
		}, pass},
		{"nothing added, nothing listed", nil, map[string][]string{"m1": nil}, pass},

		{"lost acknowledged add", adds, map[string][]string{
			"m1": {"a", "b"}, "m2": {"a"},
		}, fail("b", "b: lost: add acknowledged to client 1 at 20ns, absent on member m2")},
		{"members disagree on an unknown add", adds, map[string][]string{
			"m1": {"a", "b", "u"}, "m2": {"a", "b"}, "m3": {"a", "b", "u"},
		}, fail("u", "u: members disagree on an add of unknown outcome: present on [m1 m3], absent on [m2]")},
		{"failed add listed", adds, map[string][]string{
			"m1": {"a", "b", "f"},
		}, fail("f", "f: listed on member m1, but its add failed")},
		{"element never added", adds, map[string][]string{
			"m1": {"a", "b", "zz"},
		}, fail("zz", "zz: listed on member m1, but no client ever added it")},
		{"element listed twice", adds, map[string][]string{
			"m1": {"a", "b", "a"},
		}, fail("a", "a: member m1 lists it twice")},
		{"no final read", adds, nil, fail("", "no member's final read")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.v.check(t, CheckSet(tc.adds, tc.final), "set")
		})
	}
}
