package config

import (
	"errors"
	"strings"
	"testing"
)

// TestSecurityRefusals checks that every security setting Warden cannot
// honour stops the start with a message naming the key, and that the ones
// it honours pass.
func TestSecurityRefusals(t *testing.T) {
	const base = "tickTime=2000\ndataDir=/d\nclientPort=2181\n"
	tests := []struct {
		extra string
		want  string // "" means valid
	}{
		{"skipACL=yes", "warden.allowSkipACL"},
		{"skipACL=yes\nwarden.allowSkipACL=true", ""},
		{"skipACL=no", ""},
		{"authProvider.1=com.example.MyProvider", "authProvider.1=com.example.MyProvider"},
		{"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider", ""},
		{"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider", ""},
		{"ssl.authProvider=custom", "ssl.authProvider"},
		{"ssl.authProvider=x509", ""},
		{"enforce.auth.enabled=true", "enforce.auth.schemes is empty"},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=digest", ""},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=digest,ip", ""},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=digest\nDigestAuthenticationProvider.enabled=false", "scheme digest"},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=sasl", "java.security.auth.login.config"},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=sasl\njava.security.auth.login.config=/etc/jaas.conf", ""},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=x509", "scheme x509"},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=x509\nsecureClientPort=2281", ""},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=kerberos", "scheme kerberos"},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=ensemble", "EnsembleAuthenticationProvider"},
		{"sessionRequireClientSASLAuth=true", "scheme sasl"},
		// sessionRequireClientSASLAuth wins over enforce.auth.*, as in ZooKeeper.
		{"sessionRequireClientSASLAuth=true\nenforce.auth.enabled=true\njava.security.auth.login.config=/j", ""},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.extra, "\n", " "), func(t *testing.T) {
			c := mustParse(t, base+tt.extra)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v; want no error", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Validate passed; want an error mentioning %q", tt.want)
			case tt.want != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate: %v; want ErrInvalid mentioning %q", err, tt.want)
			}
		})
	}
}

func TestProviderSchemes(t *testing.T) {
	c := mustParse(t, "tickTime=2000\ndataDir=/d\nclientPort=2181\nDigestAuthenticationProvider.enabled=false\n"+
		"authProvider.1=org.apache.zookeeper.server.auth.EnsembleAuthenticationProvider\n"+
		"authProvider.2=org.apache.zookeeper.server.auth.DigestAuthenticationProvider\n"+
		"client.portUnification=true")
	got := c.ProviderSchemes()
	// A provider line naming DigestAuthenticationProvider loads it even
	// when DigestAuthenticationProvider.enabled=false, as in ZooKeeper.
	want := map[string]bool{"ip": true, "ensemble": true, "x509": true, "digest": true}
	if len(got) != len(want) {
		t.Fatalf("ProviderSchemes = %v, want %v", got, want)
	}
	for s := range want {
		if !got[s] {
			t.Errorf("ProviderSchemes = %v, missing %s", got, s)
		}
	}
}
