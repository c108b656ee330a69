package wire

import "testing"

func TestPermLetters(t *testing.T) {
	for _, tt := range []struct {
		p    Perm
		want string
	}{
		{0, ""}, {PermAll, "cdrwa"}, {PermRead, "r"}, {PermRead | PermAdmin, "ra"},
		{PermCreate | PermWrite, "cw"}, {PermDelete | PermRead | PermWrite, "drw"},
	} {
		if got := tt.p.Letters(); got != tt.want {
			t.Errorf("Perm(%d).Letters() = %q, want %q", tt.p, got, tt.want)
		}
	}
}
