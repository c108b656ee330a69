package tree

import (
	"testing"

	"github.com/wardenzk/warden/wire"
)

func TestValidatePath(t *testing.T) {
	tests := []struct {
		path string
		ok   bool
	}{
		{"/", true},
		{"/a", true},
		{"/a/b/c", true},
		{"/a.b", true},
		{"/.a", true},
		{"/a/...", true},
		{"/a/..b", true},
		{"/zookeeper", true},
		{"/\u00e9t\u00e9", true},
		{"/\u00a0", true},
		{"/\ufeff", true},
		{"/\uf900", true},
		{"/\uffef", true},
		{"", false},
		{"a", false},
		{"a/b", false},
		{"//", false},
		{"/a//b", false},
		{"/a/", false},
		{"/a/.", false},
		{"/a/..", false},
		{"/./a", false},
		{"/../a", false},
		{"/.", false},
		{"/..", false},
		{"/a\u0000b", false},
		{"/a\u0001", false},
		{"/a\u001f", false},
		{"/a\u007f", false},
		{"/a\u009f", false},
		{"/a\ud7ff", true},
		{"/a\ue000", false},
		{"/a\uf8ff", false},
		{"/a\ufff0", false},
		{"/a\ufff5", false},
		{"/a\uffff", false},
		{"/a\U0001F600", false},   // emoji: a surrogate pair in Java
		{"/a\xff", false},         // invalid UTF-8 decodes to U+FFFD
		{"/a\xed\xa0\x80", false}, // an encoded surrogate (U+D800)
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			err := ValidatePath(tc.path)
			if tc.ok && err != nil {
				t.Fatalf("ValidatePath(%q) = %v, want nil", tc.path, err)
			}
			if !tc.ok && err != wire.ErrBadArguments {
				t.Fatalf("ValidatePath(%q) = %v, want BadArguments", tc.path, err)
			}
		})
	}
}
