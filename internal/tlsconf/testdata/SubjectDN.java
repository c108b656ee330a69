// Prints X500Principal.getName() of every certificate in a file of
// concatenated DER certificates, one line each, as the hex of its UTF-8
// bytes (names may hold newlines). Run as a single-file program:
//
//	java SubjectDN.java certs.der
//
// dn_java_test.go compares the lines with tlsconf.SubjectDN.

import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.HexFormat;

public class SubjectDN {
    public static void main(String[] args) throws Exception {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        try (InputStream in = new FileInputStream(args[0])) {
            for (Certificate c : cf.generateCertificates(in)) {
                String name = ((X509Certificate) c).getSubjectX500Principal().getName();
                System.out.println(HexFormat.of().formatHex(name.getBytes(StandardCharsets.UTF_8)));
            }
        }
    }
}
