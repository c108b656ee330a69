package admin

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A reply is built from these JSON values, written the way ZooKeeper's
// AdminServer (Jackson with INDENT_OUTPUT) writes them:
//
//	{
//	  "key" : "value",
//	  "list" : [ 1, 2 ],
//	  "objects" : [ {
//	    "a" : 1
//	  } ],
//	  "empty" : { }
//	}
//
// Members of an object are indented two spaces per level, arrays stay on
// one line, empty containers print "{ }" and "[ ]", and there is no final
// newline. Go values map as: nil → null, bool, integers, jdouble (a Java
// double: 0.0, 1.5, 1.0E10), string, object (ordered members), []any and
// typed slices of those.

// member is one key and value of an object.
type member struct {
	key string
	val any
}

// object is a JSON object whose members keep their order, as Java's
// LinkedHashMap does.
type object []member

// set replaces the value of key, or appends the member.
func (o *object) set(key string, val any) {
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].val = val
			return
		}
	}
	*o = append(*o, member{key, val})
}

// has reports whether key is a member.
func (o object) has(key string) bool {
	for _, m := range o {
		if m.key == key {
			return true
		}
	}
	return false
}

// jdouble is a number ZooKeeper serialises from a Java double.
type jdouble float64

// sortedObject turns a map into an object with keys in order: numerically
// for int64 keys, lexically for strings.
func sortedObject[K int64 | string, V any](m map[K]V) object {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	o := make(object, 0, len(keys))
	for _, k := range keys {
		o = append(o, member{fmt.Sprint(k), m[k]})
	}
	return o
}

// marshal writes v as Jackson's default pretty printer does.
func marshal(v any) []byte {
	var b bytes.Buffer
	writeValue(&b, v, 0)
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any, depth int) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case jdouble:
		b.WriteString(javaDouble(float64(x)))
	case string:
		writeString(b, x)
	case object:
		writeObject(b, x, depth)
	case []any:
		writeArray(b, len(x), func(i int) any { return x[i] }, depth)
	case []object:
		writeArray(b, len(x), func(i int) any { return x[i] }, depth)
	case []string:
		writeArray(b, len(x), func(i int) any { return x[i] }, depth)
	case []int64:
		writeArray(b, len(x), func(i int) any { return x[i] }, depth)
	case []int:
		writeArray(b, len(x), func(i int) any { return x[i] }, depth)
	default:
		// Every value is built in this package; a new type is a bug here,
		// shown in the reply rather than crashing the server.
		writeString(b, fmt.Sprintf("<unsupported %T>", v))
	}
}

func writeObject(b *bytes.Buffer, o object, depth int) {
	if len(o) == 0 {
		b.WriteString("{ }")
		return
	}
	b.WriteString("{\n")
	for i, m := range o {
		b.WriteString(strings.Repeat("  ", depth+1))
		writeString(b, m.key)
		b.WriteString(" : ")
		writeValue(b, m.val, depth+1)
		if i < len(o)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteByte('}')
}

// writeArray writes n elements on one line; objects inside keep the
// indentation of the array's own level, as Jackson's inline array
// indenter does.
func writeArray(b *bytes.Buffer, n int, at func(int) any, depth int) {
	if n == 0 {
		b.WriteString("[ ]")
		return
	}
	b.WriteString("[ ")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		writeValue(b, at(i), depth)
	}
	b.WriteString(" ]")
}

// writeString quotes s as Jackson does: '"' and '\\' escaped, control
// characters as \n, \t, ... or \u00XX; everything else as is.
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04X`, r)
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\uFFFD`)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// javaDouble formats f as Java's Double.toString: the shortest decimal
// that reads back as f, with at least one digit after the point, in
// scientific notation ("1.0E7", "1.0E-4") outside [1e-3, 1e7).
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // 1.5E+07, 1E-04
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
