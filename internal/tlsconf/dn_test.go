package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// Attribute types used in the subjects below.
var (
	oidCN       = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidC        = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidL        = asn1.ObjectIdentifier{2, 5, 4, 7}
	oidST       = asn1.ObjectIdentifier{2, 5, 4, 8}
	oidStreet   = asn1.ObjectIdentifier{2, 5, 4, 9}
	oidO        = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU       = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidTitle    = asn1.ObjectIdentifier{2, 5, 4, 12}
	oidSerial   = asn1.ObjectIdentifier{2, 5, 4, 5}
	oidDC       = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidUID      = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidEmail    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	oidUnknown  = asn1.ObjectIdentifier{1, 2, 3, 4}
	oidSurname  = asn1.ObjectIdentifier{2, 5, 4, 4}
	oidGivenNam = asn1.ObjectIdentifier{2, 5, 4, 42}
)

const tagNumericString = 18

// ava is one attribute of a subject: type, ASN.1 string tag, raw value.
type ava struct {
	oid asn1.ObjectIdentifier
	tag int
	val []byte
}

func utf8AVA(oid asn1.ObjectIdentifier, s string) ava { return ava{oid, tagUTF8String, []byte(s)} }
func printable(oid asn1.ObjectIdentifier, s string) ava {
	return ava{oid, tagPrintableString, []byte(s)}
}
func ia5(oid asn1.ObjectIdentifier, s string) ava { return ava{oid, tagIA5String, []byte(s)} }
func bmp(oid asn1.ObjectIdentifier, s string) ava {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return ava{oid, tagBMPString, b}
}

// rawSubject encodes RDNs (in encoding order, most significant first).
func rawSubject(t testing.TB, rdns ...[]ava) []byte {
	t.Helper()
	var seq []byte
	for _, rdn := range rdns {
		var set []byte
		for _, a := range rdn {
			b, err := asn1.Marshal(struct {
				Type  asn1.ObjectIdentifier
				Value asn1.RawValue
			}{a.oid, asn1.RawValue{Tag: a.tag, Bytes: a.val}})
			if err != nil {
				t.Fatal(err)
			}
			set = append(set, b...)
		}
		b, err := asn1.Marshal(asn1.RawValue{Tag: asn1.TagSet, IsCompound: true, Bytes: set})
		if err != nil {
			t.Fatal(err)
		}
		seq = append(seq, b...)
	}
	out, err := asn1.Marshal(asn1.RawValue{Tag: asn1.TagSequence, IsCompound: true, Bytes: seq})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// subjectCases are subjects with the names Java 17 gives them
// (X500Principal.getName()); TestSubjectDNMatchesJava checks them, and
// more, against Java itself.
var subjectCases = []struct {
	name string
	rdns [][]ava
	want string
}{
	{"empty", nil, ""},
	{"plain", [][]ava{{printable(oidC, "US")}, {utf8AVA(oidO, "Example")}, {utf8AVA(oidCN, "alice")}},
		"CN=alice,O=Example,C=US"},
	{"several OUs", [][]ava{{printable(oidC, "US")}, {utf8AVA(oidO, "Example, Inc.")}, {utf8AVA(oidOU, "ops")}, {utf8AVA(oidOU, "eng")}, {utf8AVA(oidCN, "zk1")}},
		`CN=zk1,OU=eng,OU=ops,O=Example\, Inc.,C=US`},
	{"special characters", [][]ava{{utf8AVA(oidCN, `a,b+c"d\e<f>g;h=i#j`)}},
		`CN=a\,b\+c\"d\\e\<f\>g\;h\=i\#j`},
	{"leading hash and spaces", [][]ava{{utf8AVA(oidO, "  two ")}, {utf8AVA(oidCN, "#hash")}},
		`CN=\#hash,O=\ \ two\ `},
	{"only spaces", [][]ava{{utf8AVA(oidCN, "   ")}}, `CN=\ \ \ `},
	{"NUL, CR, LF", [][]ava{{utf8AVA(oidCN, "\ra\x00b\nc\r")}}, "CN=\\\ra\\00b\nc\\\r"},
	{"non-ASCII", [][]ava{{utf8AVA(oidO, "Jürgen 日本")}, {utf8AVA(oidOU, "😀")}, {bmp(oidCN, "ok")}},
		"CN=\\00o\\00k,OU=😀,O=Jürgen 日本"},
	// Java decodes every string type as UTF-8.
	{"BMPString read as UTF-8", [][]ava{{bmp(oidCN, "Ωmega ✓")}}, "CN=\x03�\\00m\\00e\\00g\\00a\\00 '\x13"},
	{"T61String read as UTF-8", [][]ava{{ava{oidCN, tagT61String, []byte("caf\xe9 caf\xc3\xa9")}}}, "CN=caf� café"},
	{"truncated UTF-8 ends the value", [][]ava{{utf8AVA(oidO, "x")}, {ava{oidCN, tagT61String, []byte("ab\xe6\x97")}}}, "CN=ab�,O=x"},
	{"emailAddress is an OID with hex", [][]ava{{ia5(oidEmail, "a@b.c")}, {utf8AVA(oidCN, "x")}},
		"CN=x,1.2.840.113549.1.9.1=#1605614062" + "2e63"},
	{"DC and UID", [][]ava{{ia5(oidDC, "com")}, {ia5(oidDC, "example")}, {utf8AVA(oidUID, "jdoe")}},
		"UID=jdoe,DC=example,DC=com"},
	{"multi-valued RDN in encoded order", [][]ava{{printable(oidC, "DE")}, {utf8AVA(oidUID, "u1"), utf8AVA(oidCN, "b"), utf8AVA(oidOU, "a")}},
		"UID=u1+CN=b+OU=a,C=DE"},
	{"multi-valued RDN with an OID", [][]ava{{utf8AVA(oidCN, "svc"), ia5(oidEmail, "s@x")}},
		"CN=svc+1.2.840.113549.1.9.1=#1603734078"},
	{"other named types are OIDs", [][]ava{{printable(oidSerial, "42")}, {utf8AVA(oidTitle, "Dr")}, {utf8AVA(oidUnknown, "x")}, {utf8AVA(oidStreet, "Main St 1")}, {utf8AVA(oidL, "Berlin")}, {utf8AVA(oidST, "BE")}},
		"ST=BE,L=Berlin,STREET=Main St 1,1.2.3.4=#0c0178,2.5.4.12=#0c024472,2.5.4.5=#13023432"},
	{"NumericString is hex", [][]ava{{ava{oidCN, tagNumericString, []byte("123 45")}}}, "CN=#1206313233203435"},
}

func TestSubjectDN(t *testing.T) {
	for _, tc := range subjectCases {
		t.Run(tc.name, func(t *testing.T) {
			c := issue(t, nil, certOpts{subject: rawSubject(t, tc.rdns...)})
			if got := SubjectDN(c.cert); got != tc.want {
				t.Errorf("SubjectDN = %q, want %q", got, tc.want)
			}
		})
	}
}

// randomSubject makes a subject of random types, string tags and values
// rich in characters that need escaping.
func randomSubject(t testing.TB, rng *mrand.Rand) []byte {
	types := []asn1.ObjectIdentifier{oidCN, oidC, oidL, oidST, oidStreet, oidO, oidOU, oidDC, oidUID, oidEmail, oidSerial, oidTitle, oidSurname, oidGivenNam, oidUnknown}
	utf8Runes := []rune(",=+<>#;\"\\ \r\n\x00\tabcXYZ019éß日本😀_!@*&'()")
	printableRunes := []rune("abcXYZ019 '()+,-./:=?*&")
	var rdns [][]ava
	for range rng.IntN(6) {
		var rdn []ava
		for range 1 + rng.IntN(3) {
			oid := types[rng.IntN(len(types))]
			n := rng.IntN(8)
			pick := func(alphabet []rune) string {
				r := make([]rune, n)
				for i := range r {
					r[i] = alphabet[rng.IntN(len(alphabet))]
				}
				return string(r)
			}
			switch rng.IntN(7) {
			case 6:
				// Bytes that make short, long, truncated and invalid
				// UTF-8, to check the decoding of malformed values.
				pool := []byte{0x41, 0x2c, 0x00, 0x80, 0x8f, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe6, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xf8, 0xff}
				b := make([]byte, n)
				for i := range b {
					b[i] = pool[rng.IntN(len(pool))]
				}
				rdn = append(rdn, ava{oid, tagT61String, b})
			case 0:
				rdn = append(rdn, printable(oid, pick(printableRunes)))
			case 1:
				rdn = append(rdn, ia5(oid, pick([]rune(",=+<>#;\"\\ \r\n\x00abc019@._"))))
			case 2:
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				rdn = append(rdn, ava{oid, tagT61String, b})
			case 3:
				rdn = append(rdn, bmp(oid, pick(utf8Runes)))
			case 4:
				rdn = append(rdn, ava{oid, tagNumericString, []byte(pick([]rune("0123456789 ")))})
			default:
				rdn = append(rdn, utf8AVA(oid, pick(utf8Runes)))
			}
		}
		rdns = append(rdns, rdn)
	}
	return rawSubject(t, rdns...)
}

// TestSubjectDNMatchesJava compares SubjectDN with what Java 17's
// X500Principal.getName() returns for the same certificates: the cases
// above and a few hundred random subjects.
func TestSubjectDNMatchesJava(t *testing.T) {
	java := requireJava(t, "java")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// Java refuses an empty issuer, so one CA signs them all.
	ca := newCA(t, "dn-test-ca")
	var subjects [][]byte
	for _, tc := range subjectCases {
		subjects = append(subjects, rawSubject(t, tc.rdns...))
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	for range 1000 {
		subjects = append(subjects, randomSubject(t, rng))
	}
	var certs []*x509.Certificate
	var der []byte
	for i, subj := range subjects {
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)),
			RawSubject:   subj,
			DNSNames:     []string{"x"}, // Java refuses an empty subject without one
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
		}
		raw, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
		if err != nil {
			continue // a subject Go refuses to encode
		}
		cert, err := x509.ParseCertificate(raw)
		if err != nil {
			continue // nor can it reach SubjectDN from a handshake
		}
		certs = append(certs, cert)
		der = append(der, raw...)
	}
	if len(certs) < 700 {
		t.Fatalf("only %d of %d subjects made certificates", len(certs), len(subjects))
	}
	file := filepath.Join(t.TempDir(), "certs.der")
	if err := os.WriteFile(file, der, 0o600); err != nil {
		t.Fatal(err)
	}
	out := run(t, java, filepath.Join("testdata", "SubjectDN.java"), file)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(certs) {
		t.Fatalf("java printed %d names for %d certificates:\n%s", len(lines), len(certs), out)
	}
	mismatches := 0
	for i, line := range lines {
		want, err := hex.DecodeString(strings.TrimSpace(line))
		if err != nil {
			t.Fatalf("java line %d: %v", i, err)
		}
		if got := SubjectDN(certs[i]); got != string(want) {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("certificate %d (subject %x):\n got %q\nwant %q", i, certs[i].RawSubject, got, want)
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d names differ from Java's", mismatches, len(certs))
	}
	t.Logf("%d subjects match Java's X500Principal.getName()", len(certs))
}
