package auth

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrJAASSyntax is wrapped by ParseJAAS errors; the message gives the line.
var ErrJAASSyntax = errors.New("auth: JAAS configuration syntax error")

// LoginModule is one entry of a JAAS login configuration section.
type LoginModule struct {
	// Class is the login module class, e.g.
	// "org.apache.zookeeper.server.auth.DigestLoginModule".
	Class string
	// Flag is required, requisite, sufficient or optional (lower case).
	Flag string
	// Options are the key="value" pairs of the entry; a key given twice
	// keeps its last value.
	Options map[string]string
}

// ParseJAAS reads a JAAS login configuration file (the file named by
// java.security.auth.login.config):
//
//	Server {
//	    org.apache.zookeeper.server.auth.DigestLoginModule required
//	    user_super="adminsecret"   // comments: // and /* */
//	    user_bob="bobsecret";
//	};
//
// It returns the sections by name. Values may be quoted (with \" and \\
// escapes) or bare words; ${...} is not expanded.
func ParseJAAS(r io.Reader) (map[string][]LoginModule, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("auth: reading JAAS configuration: %w", err)
	}
	p := jaasParser{src: string(data), line: 1}
	sections := map[string][]LoginModule{}
	for {
		tok, err := p.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			return sections, nil
		}
		if tok.kind != tokWord && tok.kind != tokString {
			return nil, p.errorf("expected a section name, found %q", tok.text)
		}
		name := tok.text
		if _, dup := sections[name]; dup {
			return nil, p.errorf("section %s is given twice", name)
		}
		if err := p.expect("{"); err != nil {
			return nil, err
		}
		modules, err := p.modules()
		if err != nil {
			return nil, err
		}
		sections[name] = modules
	}
}

// DigestLoginModule is the JAAS login module of ZooKeeper's SASL
// DIGEST-MD5 users, the only SASL mechanism Warden's server offers.
const DigestLoginModule = "org.apache.zookeeper.server.auth.DigestLoginModule"

// ServerUsers returns the DIGEST-MD5 users of a JAAS section (section ""
// means "Server", ZooKeeper's default): every option user_<name>="<password>"
// of its DigestLoginModule entries, as ZooKeeper's SaslServerCallbackHandler
// reads them. A section with another login module (Kerberos'
// Krb5LoginModule, say) is an error: Warden cannot offer that mechanism,
// and a server that silently did not would refuse every such client.
func ServerUsers(jaas map[string][]LoginModule, section string) (map[string]string, error) {
	if section == "" {
		section = "Server"
	}
	users := map[string]string{}
	for _, m := range jaas[section] {
		if m.Class != DigestLoginModule {
			return nil, fmt.Errorf("auth: JAAS section %s uses login module %s: Warden offers SASL DIGEST-MD5 only (%s); "+
				"Kerberos (GSSAPI) is not supported", section, m.Class, DigestLoginModule)
		}
		for k, v := range m.Options {
			if name, ok := strings.CutPrefix(k, "user_"); ok {
				users[name] = v
			}
		}
	}
	return users, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokString
	tokPunct // one of { } ; =
)

type token struct {
	kind tokKind
	text string
}

type jaasParser struct {
	src  string
	pos  int
	line int
	peek *token
}

func (p *jaasParser) errorf(format string, args ...any) error {
	return fmt.Errorf("auth: JAAS line %d: %s: %w", p.line, fmt.Sprintf(format, args...), ErrJAASSyntax)
}

// modules parses module entries up to the closing "}" and its optional ";".
func (p *jaasParser) modules() ([]LoginModule, error) {
	var modules []LoginModule
	for {
		tok, err := p.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokPunct && tok.text == "}" {
			next, err := p.next()
			if err != nil {
				return nil, err
			}
			if next.kind != tokPunct || next.text != ";" {
				p.peek = &next
			}
			return modules, nil
		}
		if tok.kind != tokWord {
			return nil, p.errorf("expected a login module class, found %q", tok.text)
		}
		m := LoginModule{Class: tok.text, Options: map[string]string{}}
		flag, err := p.next()
		if err != nil {
			return nil, err
		}
		switch f := strings.ToLower(flag.text); {
		case flag.kind == tokWord && (f == "required" || f == "requisite" || f == "sufficient" || f == "optional"):
			m.Flag = f
		default:
			return nil, p.errorf("login module %s: flag %q is not required, requisite, sufficient or optional", m.Class, flag.text)
		}
		for {
			key, err := p.next()
			if err != nil {
				return nil, err
			}
			if key.kind == tokPunct && key.text == ";" {
				break
			}
			if key.kind != tokWord {
				return nil, p.errorf("login module %s: expected an option or ';', found %q", m.Class, key.text)
			}
			if err := p.expect("="); err != nil {
				return nil, err
			}
			value, err := p.next()
			if err != nil {
				return nil, err
			}
			if value.kind != tokWord && value.kind != tokString {
				return nil, p.errorf("option %s: expected a value, found %q", key.text, value.text)
			}
			m.Options[key.text] = value.text
		}
		modules = append(modules, m)
	}
}

func (p *jaasParser) expect(punct string) error {
	tok, err := p.next()
	if err != nil {
		return err
	}
	if tok.kind != tokPunct || tok.text != punct {
		if tok.kind == tokEOF {
			return p.errorf("expected %q, found end of file", punct)
		}
		return p.errorf("expected %q, found %q", punct, tok.text)
	}
	return nil
}

func (p *jaasParser) next() (token, error) {
	if p.peek != nil {
		t := *p.peek
		p.peek = nil
		return t, nil
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			p.pos++
		case strings.HasPrefix(p.src[p.pos:], "//"):
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case strings.HasPrefix(p.src[p.pos:], "/*"):
			end := strings.Index(p.src[p.pos+2:], "*/")
			if end < 0 {
				return token{}, p.errorf("unterminated /* comment")
			}
			p.line += strings.Count(p.src[p.pos:p.pos+2+end], "\n")
			p.pos += end + 4
		case c == '{' || c == '}' || c == ';' || c == '=':
			p.pos++
			return token{tokPunct, string(c)}, nil
		case c == '"':
			return p.quoted()
		default:
			start := p.pos
			for p.pos < len(p.src) && !strings.ContainsRune(" \t\r\n\f{};=\"", rune(p.src[p.pos])) &&
				!strings.HasPrefix(p.src[p.pos:], "//") && !strings.HasPrefix(p.src[p.pos:], "/*") {
				p.pos++
			}
			return token{tokWord, p.src[start:p.pos]}, nil
		}
	}
	return token{kind: tokEOF}, nil
}

func (p *jaasParser) quoted() (token, error) {
	p.pos++ // opening quote
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		switch c {
		case '"':
			return token{tokString, b.String()}, nil
		case '\n':
			return token{}, p.errorf("newline inside a quoted string")
		case '\\':
			if p.pos >= len(p.src) {
				break
			}
			e := p.src[p.pos]
			p.pos++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return token{}, p.errorf("unterminated quoted string")
}
