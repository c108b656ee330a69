package auth

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const zkJAAS = `
/* ZooKeeper's documented server configuration */
Server {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_super="adminsecret"   // the super user
       user_bob="bob\"secret";
};
Client {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       username="bob"
       password="bobsecret";
};
QuorumServer {
       com.example.First Sufficient debug=true;
       com.example.Second optional
       user_x = "y"
       ;
}
`

func TestParseJAAS(t *testing.T) {
	got, err := ParseJAAS(strings.NewReader(zkJAAS))
	if err != nil {
		t.Fatalf("ParseJAAS: %v", err)
	}
	want := map[string][]LoginModule{
		"Server": {{
			Class: "org.apache.zookeeper.server.auth.DigestLoginModule", Flag: "required",
			Options: map[string]string{"user_super": "adminsecret", "user_bob": `bob"secret`},
		}},
		"Client": {{
			Class: "org.apache.zookeeper.server.auth.DigestLoginModule", Flag: "required",
			Options: map[string]string{"username": "bob", "password": "bobsecret"},
		}},
		"QuorumServer": {
			{Class: "com.example.First", Flag: "sufficient", Options: map[string]string{"debug": "true"}},
			{Class: "com.example.Second", Flag: "optional", Options: map[string]string{"user_x": "y"}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if users, err := ServerUsers(got, ""); err != nil || !reflect.DeepEqual(users, map[string]string{"super": "adminsecret", "bob": `bob"secret`}) {
		t.Errorf("ServerUsers(Server) = %v, %v", users, err)
	}
	if users, err := ServerUsers(got, "QuorumServer"); err == nil || !strings.Contains(err.Error(), "com.example.First") {
		t.Errorf("ServerUsers(QuorumServer) = %v, %v; want an error naming the login module", users, err)
	}
	if users, err := ServerUsers(got, "Missing"); err != nil || len(users) != 0 {
		t.Errorf("ServerUsers(Missing) = %v, %v", users, err)
	}
}

func TestParseJAASErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     string
	}{
		{"missing brace", "Server\n  x required;\n};", "line 2"},
		{"bad flag", "Server {\n x mandatory;\n};", "line 2"},
		{"missing semicolon", "Server {\n x required a=\"b\"\n};", "line 3"},
		{"option without value", "Server {\n x required a=;\n};", "line 2"},
		{"unterminated string", "Server {\n x required a=\"b;\n};", "line 2"},
		{"unterminated comment", "/* \n\n", "line 1"},
		{"unclosed section", "Server {\n x required;\n", "line 3"},
		{"duplicate section", "A { x required; };\nA { y required; };", "line 2"},
		{"stray token", "Server { x required; }; =", "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseJAAS(strings.NewReader(tt.in))
			if !errors.Is(err, ErrJAASSyntax) || !strings.Contains(err.Error(), tt.line) {
				t.Errorf("err = %v, want ErrJAASSyntax at %s", err, tt.line)
			}
		})
	}
}
