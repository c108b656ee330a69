package tlsconf

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"strings"
)

// SubjectDN returns the certificate's subject exactly as Java's
// X500Principal.getName() (RFC 2253 form) does, which is the id
// ZooKeeper's x509 authentication provider gives a client: x509:<DN>.
//
// Java's rules (sun.security.x509.AVA.toRFC2253String), which differ from
// Go's pkix.Name.String():
//
//   - RDNs from last to first, joined by ","; the attributes of a
//     multi-valued RDN in encoded order, joined by "+";
//   - only CN, C, L, ST, O, OU, STREET, DC and UID are written by keyword;
//     every other type (emailAddress, serialNumber, title, …) as its
//     dotted OID, and its value as "#" and the lowercase hex of the
//     value's DER encoding;
//   - values of a type other than PrintableString, T61String, IA5String,
//     GeneralString, BMPString and UTF8String (e.g. NumericString) are
//     also written as "#" hex;
//   - the value of a string type is its bytes decoded as UTF-8, whatever
//     the type (see javaUTF8);
//   - in string values each of , = + < > # ; " \ is preceded by "\", a
//     NUL is written \00, leading and trailing spaces and CRs are escaped
//     with "\", and every other character, non-ASCII included, is written
//     as it is.
//
// A subject Go's parser accepted but this one cannot read (which does not
// happen for certificates from x509.ParseCertificate) gives "".
func SubjectDN(cert *x509.Certificate) string {
	dn, ok := rfc2253(cert.RawSubject)
	if !ok {
		return ""
	}
	return dn
}

type attributeTypeAndValue struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rfc2253Keywords are the attribute types Java writes by name in RFC 2253
// form (AVAKeyword entries marked RFC 2253 compliant).
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// ASN.1 universal string tags.
const (
	tagUTF8String      = 12
	tagPrintableString = 19
	tagT61String       = 20
	tagIA5String       = 22
	tagGeneralString   = 27
	tagBMPString       = 30
)

func rfc2253(rawSubject []byte) (string, bool) {
	var rdns []asn1.RawValue
	if rest, err := asn1.Unmarshal(rawSubject, &rdns); err != nil || len(rest) > 0 {
		return "", false
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		var atvs []attributeTypeAndValue
		if rest, err := asn1.UnmarshalWithParams(rdns[i].FullBytes, &atvs, "set"); err != nil || len(rest) > 0 {
			return "", false
		}
		if i != len(rdns)-1 {
			b.WriteByte(',')
		}
		for j, atv := range atvs {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAVA(&b, atv)
		}
	}
	return b.String(), true
}

func writeAVA(b *strings.Builder, atv attributeTypeAndValue) {
	keyword, named := rfc2253Keywords[atv.Type.String()]
	if !named {
		keyword = atv.Type.String()
	}
	b.WriteString(keyword)
	b.WriteByte('=')
	s, isString := javaString(atv.Value)
	if !named || !isString {
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(atv.Value.FullBytes))
		return
	}
	const escapees = ",=+<>#;\"\\"
	var esc []rune
	for _, c := range s {
		switch {
		case strings.ContainsRune(escapees, c):
			esc = append(esc, '\\', c)
		case c == 0:
			esc = append(esc, '\\', '0', '0')
		default:
			esc = append(esc, c)
		}
	}
	lead := 0
	for lead < len(esc) && (esc[lead] == ' ' || esc[lead] == '\r') {
		lead++
	}
	trail := len(esc) - 1
	for trail >= 0 && (esc[trail] == ' ' || esc[trail] == '\r') {
		trail--
	}
	for i, c := range esc {
		if i < lead || i > trail {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
}

// javaString returns the string Java's AVA.toRFC2253String makes of a
// value of a string type: its content bytes decoded as UTF-8, whatever the
// type says (a BMPString or a T61String with non-ASCII characters comes
// out garbled, in Java and here). ok is false for other types.
func javaString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal || v.IsCompound {
		return "", false
	}
	switch v.Tag {
	case tagUTF8String, tagPrintableString, tagT61String, tagIA5String, tagGeneralString, tagBMPString:
		return javaUTF8(v.Bytes), true
	}
	return "", false
}

// javaUTF8 decodes b as Java 17's new String(b, UTF_8) does, including
// where it puts U+FFFD for malformed input and that it stops at a
// truncated sequence at the end:
//
//   - C2–DF needs one continuation byte; else U+FFFD for the lead alone;
//   - E0–EF needs two (E0 then A0–BF); a bad second byte gives U+FFFD for
//     the lead alone, a bad third for lead and second; a surrogate gives
//     one U+FFFD for all three;
//   - F0–F7 needs three and a code point in U+10000–U+10FFFF; else one
//     U+FFFD for the lead, the lead and second, or the lead, second and
//     third byte, up to the first byte that cannot continue;
//   - a lead whose sequence is cut by the end of b gives one U+FFFD and
//     ends the string (only a four-byte lead followed by one continuation
//     and a byte that cannot continue goes on with that byte);
//   - 80–C1 and F8–FF give U+FFFD each.
func javaUTF8(b []byte) string {
	const repl = '\uFFFD'
	cont := func(c byte) bool { return c&0xc0 == 0x80 }
	// badSecond3 is a second byte that cannot follow a three-byte lead.
	badSecond3 := func(lead, c byte) bool { return lead == 0xe0 && c&0xe0 == 0x80 || !cont(c) }
	// badSecond4 is a second byte that cannot follow a four-byte lead.
	badSecond4 := func(lead, c byte) bool {
		return lead > 0xf4 || lead == 0xf0 && (c < 0x90 || c > 0xbf) || lead == 0xf4 && c&0xf0 != 0x80 || !cont(c)
	}
	out := make([]rune, 0, len(b))
	for i := 0; i < len(b); {
		lead := b[i]
		i++
		switch {
		case lead < 0x80:
			out = append(out, rune(lead))
		case lead >= 0xc2 && lead <= 0xdf:
			if i == len(b) {
				return string(append(out, repl))
			}
			if !cont(b[i]) {
				out = append(out, repl)
				continue
			}
			out = append(out, rune(lead&0x1f)<<6|rune(b[i]&0x3f))
			i++
		case lead >= 0xe0 && lead <= 0xef:
			if i+1 >= len(b) {
				if i < len(b) && badSecond3(lead, b[i]) {
					out = append(out, repl)
					continue
				}
				return string(append(out, repl))
			}
			b2, b3 := b[i], b[i+1]
			switch {
			case badSecond3(lead, b2):
				out = append(out, repl)
			case !cont(b3):
				out = append(out, repl)
				i++
			default:
				r := rune(lead&0x0f)<<12 | rune(b2&0x3f)<<6 | rune(b3&0x3f)
				if r >= 0xd800 && r <= 0xdfff {
					r = repl
				}
				out = append(out, r)
				i += 2
			}
		case lead >= 0xf0 && lead <= 0xf7:
			if i+2 >= len(b) {
				if lead > 0xf4 || i < len(b) && badSecond4(lead, b[i]) {
					out = append(out, repl)
					continue
				}
				out = append(out, repl)
				i++
				if i < len(b) && !cont(b[i]) {
					continue
				}
				return string(out)
			}
			b2, b3, b4 := b[i], b[i+1], b[i+2]
			r := rune(lead&0x07)<<18 | rune(b2&0x3f)<<12 | rune(b3&0x3f)<<6 | rune(b4&0x3f)
			if cont(b2) && cont(b3) && cont(b4) && r >= 0x10000 && r <= 0x10ffff {
				out = append(out, r)
				i += 3
				continue
			}
			out = append(out, repl)
			switch {
			case badSecond4(lead, b2):
			case !cont(b3):
				i++
			default:
				i += 2
			}
		default:
			out = append(out, repl)
		}
	}
	return string(out)
}
