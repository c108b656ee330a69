package auth

import "testing"

func TestDigestID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"super:test", "super:D/InIHSb7yEEbrWz8b9l71RjZJU="},
		// Values computed with Python's hashlib and base64.
		{"bob:pw:with:colons", "bob:Y/LfFgTEMzeSdJM371GRzmUOebQ="},
		{"nocolon", "nocolon:Ra+cHr2ZoHvBjtNArFGNGlVie4g="},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := DigestID(tt.in); got != tt.want {
				t.Errorf("DigestID(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestUserName(t *testing.T) {
	tests := []struct{ scheme, id, want string }{
		{"digest", "bob:D/InIHSb7yEEbrWz8b9l71RjZJU=", "bob"},
		{"ip", "127.0.0.1", "127.0.0.1"},
		{"ip", "0:0:0:0:0:0:0:1", "0:0:0:0:0:0:0:1"},
		{"super", "", ""},
		{"sasl", "bob", "bob"},
		{"x509", "CN=bob,O=example", "CN=bob,O=example"},
		{"world", "anyone", "anyone"},
	}
	for _, tt := range tests {
		t.Run(tt.scheme+":"+tt.id, func(t *testing.T) {
			if got := UserName(tt.scheme, tt.id); got != tt.want {
				t.Errorf("UserName = %q, want %q", got, tt.want)
			}
		})
	}
}
