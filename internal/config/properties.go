package config

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// property is one key/value pair of a Java properties file, as
// java.util.Properties.load reads it, with both sides trimmed the way
// ZooKeeper trims them (String.trim: every rune <= ' ' at either end).
type property struct {
	key   string
	value string
	line  int // 1-based natural line on which the logical line starts
}

// parseProperties reads r with the syntax of java.util.Properties.load:
//
//   - natural lines end at "\n", "\r" or "\r\n"; leading space, tab and
//     form feed are skipped; blank lines are ignored;
//   - a line whose first non-blank character is '#' or '!' is a comment
//     (a backslash at its end does not continue it);
//   - a line ending in an odd number of backslashes continues on the next
//     natural line, whose leading blanks are dropped;
//   - the key ends at the first unescaped '=', ':' or blank; blanks, then at
//     most one '=' or ':', then blanks separate it from the value;
//   - escapes \t \n \r \f and \uXXXX are decoded, any other \c is c; a
//     malformed \uXXXX is an error.
//
// Java reads the stream as ISO-8859-1. We read UTF-8 when the file is valid
// UTF-8 (so non-ASCII paths survive) and fall back to ISO-8859-1 otherwise.
func parseProperties(r io.Reader) ([]property, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("config: reading configuration: %w", err)
	}
	text := string(data)
	if !utf8.Valid(data) {
		runes := make([]rune, len(data))
		for i, b := range data {
			runes[i] = rune(b)
		}
		text = string(runes)
	}

	var props []property
	lines := splitNaturalLines(text)
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := trimLeadingBlanks(lines[i])
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		var logical strings.Builder
		for {
			if !endsWithOddBackslashes(line) {
				logical.WriteString(line)
				break
			}
			logical.WriteString(line[:len(line)-1])
			if i+1 >= len(lines) {
				break
			}
			i++
			line = trimLeadingBlanks(lines[i])
		}
		key, value, err := splitKeyValue(logical.String())
		if err != nil {
			return nil, fmt.Errorf("config: line %d: %w: %w", start, err, ErrInvalid)
		}
		props = append(props, property{key: javaTrim(key), value: javaTrim(value), line: start})
	}
	return props, nil
}

// splitNaturalLines splits text at "\r\n", "\r" and "\n".
func splitNaturalLines(text string) []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, len(text)+1)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		for i, c := range data {
			switch c {
			case '\n':
				return i + 1, data[:i], nil
			case '\r':
				if i+1 < len(data) {
					if data[i+1] == '\n' {
						return i + 2, data[:i], nil
					}
					return i + 1, data[:i], nil
				}
				if atEOF {
					return i + 1, data[:i], nil
				}
				return 0, nil, nil // need one more byte to see a possible '\n'
			}
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeadingBlanks(s string) string {
	i := 0
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return s[i:]
}

func endsWithOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue splits one logical line into its unescaped key and value.
func splitKeyValue(line string) (key, value string, err error) {
	end := len(line)
	valueStart := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++ // the escaped character belongs to the key
			continue
		}
		if c == '=' || c == ':' {
			end, valueStart = i, i+1
			break
		}
		if isBlank(c) {
			end = i
			j := i
			for j < len(line) && isBlank(line[j]) {
				j++
			}
			if j < len(line) && (line[j] == '=' || line[j] == ':') {
				j++
			}
			valueStart = j
			break
		}
	}
	key, err = unescape(line[:end])
	if err != nil {
		return "", "", err
	}
	value, err = unescape(trimLeadingBlanks(line[min(valueStart, len(line)):]))
	if err != nil {
		return "", "", err
	}
	return key, value, nil
}

// unescape decodes the escapes of java.util.Properties.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break // a lone trailing backslash is dropped, as Java does
		}
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return "", fmt.Errorf(`malformed \uxxxx encoding in %q`, s)
			}
			i += 4
			if utf16.IsSurrogate(r) && i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, ok := hex4(s, i+3); ok {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// hex4 decodes the four hex digits of a \uXXXX escape starting at s[i].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, h := range s[i : i+4] {
		var v rune
		switch {
		case h >= '0' && h <= '9':
			v = h - '0'
		case h >= 'a' && h <= 'f':
			v = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			v = h - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | v
	}
	return r, true
}

// javaTrim removes every character <= ' ' from both ends, like String.trim.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}
