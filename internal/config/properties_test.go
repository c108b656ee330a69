package config

import (
	"errors"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []property
	}{
		{"equals", "a=b", []property{{"a", "b", 1}}},
		{"colon", "a:b", []property{{"a", "b", 1}}},
		{"space", "a b", []property{{"a", "b", 1}}},
		{"blanks around separator", "  a \t = \f b  ", []property{{"a", "b", 1}}},
		{"only first separator", "a==b", []property{{"a", "=b", 1}}},
		{"colon in value", "server.1=h:2888:3888", []property{{"server.1", "h:2888:3888", 1}}},
		{"key without value", "a", []property{{"a", "", 1}}},
		{"key then separator only", "a =", []property{{"a", "", 1}}},
		{"comments and blanks", "# c\n! c\n\n   \n  # indented\na=1", []property{{"a", "1", 6}}},
		{"hash inside value", "a=b#c", []property{{"a", "b#c", 1}}},
		{"continuation", "a=one\\\n    two\nb=3", []property{{"a", "onetwo", 1}, {"b", "3", 3}}},
		{"continuation keeps comment-looking line", "a=x\\\n  #y", []property{{"a", "x#y", 1}}},
		{"comment line is not continued", "# c \\\na=1", []property{{"a", "1", 2}}},
		{"even backslashes do not continue", "a=x\\\\\nb=2", []property{{"a", `x\`, 1}, {"b", "2", 2}}},
		{"continuation at EOF", "a=x\\", []property{{"a", "x", 1}}},
		{"continuation into blank line", "a=x\\\n\nb=1", []property{{"a", "x", 1}, {"b", "1", 3}}},
		{"CRLF and CR", "a=1\r\nb=2\rc=3", []property{{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}}},
		{"escapes", `a=t\tn\nx\y`, []property{{"a", "t\tn\nxy", 1}}},
		{"escaped separator in key", `a\=b\ c=d`, []property{{"a=b c", "d", 1}}},
		{"unicode escape", `k=caf\u00e9`, []property{{"k", "café", 1}}},
		{"surrogate pair", `k=\ud83d\ude00`, []property{{"k", "😀", 1}}},
		{"utf-8 passes through", "k=café", []property{{"k", "café", 1}}},
		{"latin-1 file", "k=caf\xe9", []property{{"k", "café", 1}}},
		{"trailing blanks trimmed", "a=b   \t", []property{{"a", "b", 1}}},
		{"duplicates kept in order", "a=1\na=2", []property{{"a", "1", 1}, {"a", "2", 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProperties(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("parseProperties: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("property %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestParsePropertiesMalformedUnicode(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\uzzzz`, `\u00g0=1`} {
		t.Run(in, func(t *testing.T) {
			_, err := parseProperties(strings.NewReader("x=1\n" + in))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("err = %v, want ErrInvalid at line 2", err)
			}
		})
	}
}

func FuzzParseProperties(f *testing.F) {
	f.Add("a=b\\\n c\n#x\n\\u0041:1")
	f.Fuzz(func(t *testing.T, in string) {
		props, err := parseProperties(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, p := range props {
			if p.line < 1 || javaTrim(p.key) != p.key || javaTrim(p.value) != p.value {
				t.Fatalf("bad property %+v", p)
			}
		}
	})
}
