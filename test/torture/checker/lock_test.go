package checker

import "testing"

func TestCheckLock(t *testing.T) {
	// g is a grant released normally.
	g := func(c int, token int64, acq, rel Span) Grant {
		return Grant{Client: c, Token: token, Acquire: acq, Release: rel, Released: true}
	}
	lost := func(gr Grant) Grant { gr.Released, gr.Lost = false, true; return gr }
	for _, tc := range []struct {
		name   string
		grants []Grant
		v      verdict
	}{
		{"none", nil, pass},
		{"one after another", []Grant{
			g(0, 10, sp(0, 10), sp(20, 25)),
			g(1, 12, sp(5, 30), sp(40, 45)),  // waited for client 0
			g(2, 15, sp(50, 60), sp(70, 75)), // later call, later token
			g(0, 20, sp(8, 80), Span{}),      // queued early; holds to the end
		}, pass},
		{"granted the instant the release began", []Grant{
			g(0, 10, sp(0, 10), sp(20, 25)),
			g(1, 12, sp(5, 20), sp(30, 35)),
		}, pass},
		{"overlap after a lost tenure", []Grant{
			lost(g(0, 10, sp(0, 10), sp(50, 55))),
			g(1, 12, sp(5, 30), sp(40, 45)),
		}, pass},
		{"never released but lost", []Grant{
			lost(g(0, 10, sp(0, 10), Span{})),
			g(1, 12, sp(5, 30), sp(40, 45)),
		}, pass},

		{"two holders at once", []Grant{
			g(0, 10, sp(0, 10), sp(20, 25)),
			g(1, 12, sp(5, 18), sp(30, 35)),
		}, fail("token 12", "token 12: two holders at once: client 1 (token 12, acquired 5ns–18ns) was granted before client 0 (token 10, acquired 0s–10ns), of a lower token, began to release (released 20ns–25ns)")},
		{"holder that never released", []Grant{
			g(0, 10, sp(0, 10), Span{}),
			g(1, 12, sp(5, 300), sp(310, 320)),
		}, fail("token 12", "began to release (it never did)")},
		{"an earlier holder than the last still held it", []Grant{
			g(0, 10, sp(0, 10), sp(100, 110)),
			lost(g(1, 12, sp(5, 20), sp(30, 40))),
			g(2, 14, sp(6, 50), sp(60, 70)),
		}, fail("token 12", "token 12: two holders at once")},
		{"token went backwards", []Grant{
			g(0, 10, sp(0, 10), sp(20, 25)),
			g(1, 8, sp(30, 40), sp(50, 55)),
		}, fail("token 8", "token 8: token went backwards: client 1 (token 8, acquired 30ns–40ns) was granted after client 0 (token 10, acquired 0s–10ns) had been")},
		{"token granted twice", []Grant{
			g(0, 10, sp(0, 10), sp(20, 25)),
			g(1, 10, sp(30, 40), sp(50, 55)),
		}, fail("token 10", "token 10: token granted twice")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.v.check(t, CheckLock(tc.grants), "lock")
		})
	}
}
