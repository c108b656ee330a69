// Package auth holds ZooKeeper's authentication providers in pure form:
// the digest scheme's id computation, whoAmI user names, the JAAS login
// file that lists SASL users, and the server side of SASL DIGEST-MD5.
//
// # Digest
//
// addauth digest "user:password" authenticates as
// digest:DigestID("user:password") = "user:" + base64(SHA1("user:password")).
// A connection whose id equals zoo.cfg's
// DigestAuthenticationProvider.superDigest is also super.
//
// # SASL DIGEST-MD5
//
// ZooKeeper clients (Java ZooKeeperSaslClient, kazoo through pure-sasl,
// the C client through Cyrus SASL) authenticate with opcode 102 (SASL)
// packets. The server reads its users from the JAAS file named by
// java.security.auth.login.config, section "Server" (zoo.cfg
// sasl.serverconfig), options user_<name>="<password>":
//
//	jaas, err := auth.ParseJAAS(f)
//	users, err := auth.ServerUsers(jaas, cfg.SASLServerContext)
//
// Per connection, one DigestMD5Server runs the exchange; each SASL request
// token goes to Step and the returned challenge goes back in the reply:
//
//	s := auth.NewDigestMD5Server(users, auth.SASLServerName)
//	challenge, done, err := s.Step(token) // first token is empty
//	// err: reply AUTHFAILED (-115) and close the connection.
//	// done: send the challenge (rspauth=...), then add the auth id
//	//       sasl:<s.AuthorizationID()>, and super when it is zoo.cfg's superUser.
//
// Only qop=auth is offered (no integrity or confidentiality layer), as in
// ZooKeeper, whose connections are protected by TLS when needed. The
// realm and server name are "zk-sasl-md5" and the protocol "zookeeper":
// the digest-uri clients send is "zookeeper/zk-sasl-md5".
package auth
