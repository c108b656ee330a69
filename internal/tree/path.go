package tree

import (
	"strings"

	"github.com/wardenzk/warden/wire"
)

// ValidatePath reports whether path is a well-formed znode path by the rules
// of ZooKeeper's PathUtils.validatePath, returning wire.ErrBadArguments when
// it is not. A path starts with '/', is "/" or does not end with '/', has no
// empty segment and no "." or ".." segment, and contains no character
// U+0000–U+001F, U+007F–U+009F, U+D800–U+F8FF or U+FFF0–U+FFFF. Java checks
// UTF-16 code units, so every character outside the Basic Multilingual Plane
// (a surrogate pair) is rejected too, as is invalid UTF-8 (Java decodes it as
// U+FFFD).
func ValidatePath(path string) error {
	if path == "" || path[0] != '/' {
		return wire.ErrBadArguments
	}
	if path == "/" {
		return nil
	}
	if path[len(path)-1] == '/' {
		return wire.ErrBadArguments
	}
	for _, r := range path {
		if badPathRune(r) {
			return wire.ErrBadArguments
		}
	}
	rest := path[1:]
	for rest != "" {
		seg := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if seg == "" || seg == "." || seg == ".." {
			return wire.ErrBadArguments
		}
	}
	return nil
}

// badPathRune reports whether r is a character PathUtils rejects. Invalid
// UTF-8 decodes to U+FFFD, which is in a rejected range.
func badPathRune(r rune) bool {
	switch {
	case r <= 0x1f:
		return true
	case r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0xd800 && r <= 0xf8ff:
		return true
	case r >= 0xfff0 && r <= 0xffff:
		return true
	case r > 0xffff: // a surrogate pair in UTF-16
		return true
	}
	return false
}

// splitParent splits path at its last '/' as ZooKeeper does
// (path.substring(0, lastSlash)); the parent of "/a" is "", which names the
// root. ok is false when path has no '/' or contains '\0'.
func splitParent(path string) (parent string, ok bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || strings.IndexByte(path, 0) >= 0 {
		return "", false
	}
	return path[:i], true
}

// eventPath is the path a NodeChildrenChanged event carries for a parent
// named by splitParent: "" (the root) becomes "/".
func eventPath(parent string) string {
	if parent == "" {
		return "/"
	}
	return parent
}

// isSpecialPath reports whether path is one of the nodes delete refuses
// with BadArguments (DataTree.isSpecialPath).
func isSpecialPath(path string) bool {
	switch path {
	case "/", procPath, quotaPath, configPath:
		return true
	}
	return false
}
