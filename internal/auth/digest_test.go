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

func TestDigestAlgorithms(t *testing.T) {
	// Values computed with Python's hashlib and base64.
	tests := []struct{ name, want string }{
		{"SHA1", "super:D/InIHSb7yEEbrWz8b9l71RjZJU="},
		{"sha-1", "super:D/InIHSb7yEEbrWz8b9l71RjZJU="},
		{"SHA-256", "super:wjySwxg860UATFtciuZ1lpzrCHrPeov6SPu/ZD56uig="},
		{"SHA256", "super:wjySwxg860UATFtciuZ1lpzrCHrPeov6SPu/ZD56uig="},
		{"SHA3-256", "super:cRy/KPYuDpW/dtsepniTMpuiuupnWgdU9txltIfv3hA="},
		{"sha-512", "super:cMAGk13FCMtJkaVQImGEKhjqoGELCiVjYdIhiD8stB1FnIpdGeFvKwAHh5mf4tUYmBR2ZY9181dZTXEHMlkVhg=="},
		{"MD5", "super:yzhcGieXAe2NBWh0Znxa3g=="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseDigestAlg(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.ID("super:test"); got != tt.want {
				t.Errorf("ID = %q, want %q", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"RipeMD160", "", "SHA-2"} {
		if _, err := ParseDigestAlg(bad); err == nil {
			t.Errorf("ParseDigestAlg(%q) succeeded; want an error", bad)
		}
	}
	if got := (DigestAlg{}).ID("super:test"); got != DigestID("super:test") {
		t.Errorf("zero DigestAlg = %q, want SHA1's", got)
	}
}
