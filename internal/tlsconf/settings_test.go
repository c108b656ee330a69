package tlsconf

import (
	"crypto/tls"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/config"
)

func TestReadDefaults(t *testing.T) {
	for _, tc := range []struct {
		prefix                 string
		clientHost, reverseDNS bool
	}{
		{ClientPrefix, false, false},
		{QuorumPrefix, true, true},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			s := mustRead(t, tc.prefix, nil)
			if s.Prefix != tc.prefix || s.Configured() {
				t.Errorf("Prefix %q Configured %v", s.Prefix, s.Configured())
			}
			if s.ClientAuth != ClientAuthNeed {
				t.Errorf("ClientAuth = %v, want need", s.ClientAuth)
			}
			if !s.HostnameVerification || s.ClientHostnameVerification != tc.clientHost || s.AllowReverseDNSLookup != tc.reverseDNS {
				t.Errorf("hostname %v client %v reverse %v", s.HostnameVerification, s.ClientHostnameVerification, s.AllowReverseDNSLookup)
			}
			if s.MinVersion != tls.VersionTLS12 || s.MaxVersion != tls.VersionTLS13 {
				t.Errorf("versions %x..%x, want TLS 1.2..1.3", s.MinVersion, s.MaxVersion)
			}
			if !slices.Equal(s.CipherSuites, defaultSuites) {
				t.Errorf("CipherSuites = %v", s.CipherSuites)
			}
			if s.HandshakeDetectionTimeout != 5*time.Second {
				t.Errorf("HandshakeDetectionTimeout = %v", s.HandshakeDetectionTimeout)
			}
			if len(s.Warnings) != 0 {
				t.Errorf("Warnings = %q", s.Warnings)
			}
		})
	}
}

// The default suites are ZooKeeper's Java 9+ list less exactly the suites
// Go does not offer safely.
func TestDefaultSuitesAreZooKeepersListThatGoOffers(t *testing.T) {
	zk := []string{
		"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
		"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
		"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
		"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
		"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	}
	var want []uint16
	for _, name := range zk {
		if id, ok := suiteByName(name); ok {
			want = append(want, id)
		}
	}
	if !slices.Equal(defaultSuites, want) {
		t.Errorf("defaultSuites = %v, want %v", defaultSuites, want)
	}
}

func TestReadValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix string
		keys   map[string]string
		check  func(t *testing.T, s Settings)
	}{
		{"store types from extension", ClientPrefix, map[string]string{
			"ssl.keyStore.location": "/k/a.JKS", "ssl.trustStore.location": "/k/t.pfx",
		}, func(t *testing.T, s Settings) {
			if s.KeyStore.Type != StoreJKS || s.TrustStore.Type != StorePKCS12 || !s.Configured() {
				t.Errorf("types %q %q", s.KeyStore.Type, s.TrustStore.Type)
			}
		}},
		{"store type key wins, any case", QuorumPrefix, map[string]string{
			"ssl.quorum.keyStore.location": "/k/a.jks", "ssl.quorum.keyStore.type": "pem",
			"ssl.quorum.keyStore.password": " pw ", "ssl.quorum.keyStore.passwordPath": "/k/pw",
		}, func(t *testing.T, s Settings) {
			want := Store{Location: "/k/a.jks", Password: "pw", PasswordPath: "/k/pw", Type: StorePEM}
			if s.KeyStore != want {
				t.Errorf("KeyStore = %+v, want %+v", s.KeyStore, want)
			}
		}},
		{"clientAuth", ClientPrefix, map[string]string{"ssl.clientAuth": "WANT"}, func(t *testing.T, s Settings) {
			if s.ClientAuth != ClientAuthWant {
				t.Errorf("ClientAuth = %v", s.ClientAuth)
			}
		}},
		{"empty clientAuth is need", ClientPrefix, map[string]string{"ssl.clientAuth": ""}, func(t *testing.T, s Settings) {
			if s.ClientAuth != ClientAuthNeed {
				t.Errorf("ClientAuth = %v", s.ClientAuth)
			}
		}},
		{"clientHostnameVerification needs hostnameVerification", ClientPrefix, map[string]string{
			"ssl.hostnameVerification": "false", "ssl.clientHostnameVerification": "true",
		}, func(t *testing.T, s Settings) {
			if s.HostnameVerification || s.ClientHostnameVerification {
				t.Errorf("hostname %v client %v", s.HostnameVerification, s.ClientHostnameVerification)
			}
		}},
		{"quorum clientHostnameVerification off", QuorumPrefix, map[string]string{
			"ssl.quorum.clientHostnameVerification": "FALSE", "ssl.quorum.allowReverseDnsLookup": "false",
		}, func(t *testing.T, s Settings) {
			if !s.HostnameVerification || s.ClientHostnameVerification || s.AllowReverseDNSLookup {
				t.Errorf("%+v", s)
			}
		}},
		{"protocol TLSv1.2", ClientPrefix, map[string]string{"ssl.protocol": "TLSv1.2"}, func(t *testing.T, s Settings) {
			if s.MinVersion != tls.VersionTLS12 || s.MaxVersion != tls.VersionTLS12 {
				t.Errorf("versions %x..%x", s.MinVersion, s.MaxVersion)
			}
		}},
		{"enabledProtocols wins over protocol", ClientPrefix, map[string]string{
			"ssl.protocol": "TLSv1.2", "ssl.enabledProtocols": "TLSv1.3",
		}, func(t *testing.T, s Settings) {
			if s.MinVersion != tls.VersionTLS13 || s.MaxVersion != tls.VersionTLS13 || s.CipherSuites != nil {
				t.Errorf("versions %x..%x suites %v", s.MinVersion, s.MaxVersion, s.CipherSuites)
			}
		}},
		{"enabledProtocols list", ClientPrefix, map[string]string{"ssl.enabledProtocols": "TLSv1.3, TLSv1.2"}, func(t *testing.T, s Settings) {
			if s.MinVersion != tls.VersionTLS12 || s.MaxVersion != tls.VersionTLS13 {
				t.Errorf("versions %x..%x", s.MinVersion, s.MaxVersion)
			}
		}},
		{"ciphersuites without TLS 1.3 suites turn TLS 1.3 off", ClientPrefix, map[string]string{
			"ssl.ciphersuites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
		}, func(t *testing.T, s Settings) {
			if s.MaxVersion != tls.VersionTLS12 || len(s.CipherSuites) != 2 || len(s.Warnings) != 1 {
				t.Errorf("max %x suites %v warnings %q", s.MaxVersion, s.CipherSuites, s.Warnings)
			}
		}},
		{"ciphersuites with only TLS 1.3 suites turn TLS 1.2 off", ClientPrefix, map[string]string{
			"ssl.ciphersuites": "TLS_AES_256_GCM_SHA384,TLS_AES_128_GCM_SHA256,TLS_CHACHA20_POLY1305_SHA256",
		}, func(t *testing.T, s Settings) {
			if s.MinVersion != tls.VersionTLS13 || s.CipherSuites != nil || len(s.Warnings) != 1 {
				t.Errorf("min %x suites %v warnings %q", s.MinVersion, s.CipherSuites, s.Warnings)
			}
		}},
		{"Java's SSL_ names", ClientPrefix, map[string]string{
			"ssl.ciphersuites": "SSL_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ssl.protocol": "TLSv1.2",
		}, func(t *testing.T, s Settings) {
			if !slices.Equal(s.CipherSuites, []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}) {
				t.Errorf("suites %v", s.CipherSuites)
			}
		}},
		{"handshakeDetectionTimeoutMillis", QuorumPrefix, map[string]string{"ssl.quorum.handshakeDetectionTimeoutMillis": "250"}, func(t *testing.T, s Settings) {
			if s.HandshakeDetectionTimeout != 250*time.Millisecond {
				t.Errorf("timeout %v", s.HandshakeDetectionTimeout)
			}
		}},
		{"handshakeDetectionTimeoutMillis below 1 falls back", ClientPrefix, map[string]string{"ssl.handshakeDetectionTimeoutMillis": "0"}, func(t *testing.T, s Settings) {
			if s.HandshakeDetectionTimeout != 5*time.Second || len(s.Warnings) != 1 {
				t.Errorf("timeout %v warnings %q", s.HandshakeDetectionTimeout, s.Warnings)
			}
		}},
		{"crl and ocsp false", ClientPrefix, map[string]string{"ssl.crl": "false", "ssl.ocsp": "False"}, func(t *testing.T, s Settings) {}},
		{"sslProvider OPENSSL is a warning", ClientPrefix, map[string]string{"ssl.sslProvider": "OPENSSL"}, func(t *testing.T, s Settings) {
			if len(s.Warnings) != 1 {
				t.Errorf("warnings %q", s.Warnings)
			}
		}},
		{"the quorum family has no sslProvider", QuorumPrefix, map[string]string{"ssl.quorum.sslProvider": "anything", "ssl.sslProvider": "anything"}, func(t *testing.T, s Settings) {}},
		{"the other family's keys are not read", QuorumPrefix, map[string]string{"ssl.crl": "true", "ssl.keyStore.location": "/x.jks"}, func(t *testing.T, s Settings) {
			if s.Configured() {
				t.Error("quorum family read ssl.keyStore.location")
			}
		}},
		{"no trust store is a warning", ClientPrefix, map[string]string{"ssl.keyStore.location": "/k.pem"}, func(t *testing.T, s Settings) {
			if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "ssl.trustStore.location") {
				t.Errorf("warnings %q", s.Warnings)
			}
		}},
		{"fips-mode on the quorum is a warning", QuorumPrefix, map[string]string{"fips-mode": "true"}, func(t *testing.T, s Settings) {
			if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "ssl.quorum.hostnameVerification=false") {
				t.Errorf("warnings %q", s.Warnings)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, mustRead(t, tc.prefix, tc.keys))
		})
	}
}

func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name      string
		prefix    string
		keys      map[string]string
		fragments []string
	}{
		{"crl", ClientPrefix, map[string]string{"ssl.crl": "true"}, []string{"ssl.crl", "revocation"}},
		{"ocsp", QuorumPrefix, map[string]string{"ssl.quorum.ocsp": "TRUE"}, []string{"ssl.quorum.ocsp", "revocation"}},
		{"boolean typo", ClientPrefix, map[string]string{"ssl.hostnameVerification": "yes"}, []string{"ssl.hostnameVerification", "true or false"}},
		{"fips-mode typo", ClientPrefix, map[string]string{"fips-mode": "on"}, []string{"fips-mode"}},
		{"context supplier", ClientPrefix, map[string]string{"ssl.context.supplier.class": "com.example.Ctx"}, []string{"ssl.context.supplier.class", "Java"}},
		{"TLSv1.1", ClientPrefix, map[string]string{"ssl.protocol": "TLSv1.1"}, []string{"ssl.protocol", "TLSv1.2"}},
		{"TLSv1", QuorumPrefix, map[string]string{"ssl.quorum.protocol": "TLSv1"}, []string{"ssl.quorum.protocol"}},
		{"unknown protocol", ClientPrefix, map[string]string{"ssl.protocol": "QUIC"}, []string{"ssl.protocol"}},
		{"enabledProtocols TLSv1", ClientPrefix, map[string]string{"ssl.enabledProtocols": "TLSv1.2,TLSv1"}, []string{"ssl.enabledProtocols", "TLSv1"}},
		{"enabledProtocols typo", ClientPrefix, map[string]string{"ssl.enabledProtocols": "TLS1.2"}, []string{"ssl.enabledProtocols", "TLS1.2"}},
		{"unknown cipher suite", ClientPrefix, map[string]string{"ssl.ciphersuites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_FOO"}, []string{"ssl.ciphersuites", "TLS_FOO"}},
		{"suite Go lacks", ClientPrefix, map[string]string{"ssl.ciphersuites": "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"}, []string{"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"}},
		{"suite Go offers only as insecure", ClientPrefix, map[string]string{"ssl.ciphersuites": "TLS_RSA_WITH_AES_128_GCM_SHA256"}, []string{"TLS_RSA_WITH_AES_128_GCM_SHA256"}},
		{"some TLS 1.3 suites", ClientPrefix, map[string]string{"ssl.ciphersuites": "TLS_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, []string{"ssl.ciphersuites", "all three"}},
		{"no suite for the only protocol", ClientPrefix, map[string]string{"ssl.enabledProtocols": "TLSv1.3", "ssl.ciphersuites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, []string{"ssl.ciphersuites", "no protocol"}},
		{"clientAuth", ClientPrefix, map[string]string{"ssl.clientAuth": "maybe"}, []string{"ssl.clientAuth", "need, want or none"}},
		{"timeout", ClientPrefix, map[string]string{"ssl.handshakeDetectionTimeoutMillis": "5s"}, []string{"ssl.handshakeDetectionTimeoutMillis"}},
		{"sslProvider", ClientPrefix, map[string]string{"ssl.sslProvider": "BORINGSSL"}, []string{"ssl.sslProvider"}},
		{"BCFKS type", ClientPrefix, map[string]string{"ssl.keyStore.location": "/k/ks", "ssl.keyStore.type": "BCFKS"}, []string{"ssl.keyStore.type", "PKCS12"}},
		{"BCFKS extension", QuorumPrefix, map[string]string{"ssl.quorum.trustStore.location": "/k/t.bcfks"}, []string{"ssl.quorum.trustStore.location"}},
		{"unknown type", ClientPrefix, map[string]string{"ssl.trustStore.location": "/k/t", "ssl.trustStore.type": "JCEKS"}, []string{"ssl.trustStore.type", "JKS, PKCS12 or PEM"}},
		{"type not from extension", ClientPrefix, map[string]string{"ssl.keyStore.location": "/k/keystore"}, []string{"ssl.keyStore.location", "ssl.keyStore.type"}},
		{"unknown family", "ssl.admin.", nil, []string{"ClientPrefix"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(lookupMap(tc.keys), tc.prefix)
			wantErr(t, err, ErrSetting, tc.fragments...)
		})
	}
}

// zoo.cfg keys reach Read through config.Config.Lookup, spelled with or
// without "zookeeper.".
func TestReadFromZooCfg(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(strings.Join([]string{
		"dataDir=/tmp/zk",
		"clientPort=2181",
		"secureClientPort=2281",
		"zookeeper.ssl.keyStore.location=/etc/zk/server.p12",
		"ssl.keyStore.password=changeit",
		"ssl.clientAuth=none",
		"ssl.quorum.keyStore.location=/etc/zk/quorum.jks",
		"zookeeper.ssl.quorum.hostnameVerification=false",
	}, "\n")), "/")
	if err != nil {
		t.Fatal(err)
	}
	client, err := Read(cfg.Lookup, ClientPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if client.KeyStore.Location != "/etc/zk/server.p12" || client.KeyStore.Type != StorePKCS12 || client.KeyStore.Password != "changeit" || client.ClientAuth != ClientAuthNone {
		t.Errorf("client family %+v", client)
	}
	quorum, err := Read(cfg.Lookup, QuorumPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if quorum.KeyStore.Type != StoreJKS || quorum.HostnameVerification || quorum.ClientHostnameVerification {
		t.Errorf("quorum family %+v", quorum)
	}
}

// lookupMap is a Read lookup over a map of zoo.cfg keys.
func lookupMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// mustRead reads a family from keys.
func mustRead(t testing.TB, prefix string, keys map[string]string) Settings {
	t.Helper()
	s, err := Read(lookupMap(keys), prefix)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return s
}

// wantErr checks that err wraps sentinel and mentions every fragment.
func wantErr(t testing.TB, err, sentinel error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one wrapping %v mentioning %q", sentinel, fragments)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("error %q does not wrap %v", err, sentinel)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}
