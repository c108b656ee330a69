// Package console is Warden's web console: a page to browse and search
// the znode tree, read a node's data (text, JSON, hex), stat and ACL,
// edit, create and delete nodes when logged in, and watch the sessions,
// the ensemble and live charts of the server's throughput, latency and
// connections. ZooKeeper has no such thing.
//
//	c := console.New(srv, console.Options{Prefix: "/ui/", Members: console.MembersOf(cfg)})
//	defer c.Close()
//	adminMux.Handle("/ui/", c)
//
// The page is a few embedded files (static/: HTML, CSS and vanilla JS;
// charts drawn on <canvas> by charts.js); nothing is fetched from
// elsewhere, and a Content-Security-Policy keeps it that way.
//
// # The API
//
// Everything is under Options.Prefix; replies are JSON, errors are
// {"error": "what happened and what to do", "code": "NoAuth"}.
//
//	GET    api/me                    who is viewing: {user, writable, server, mode}
//	POST   api/login                 {user, password} → sets the login cookie
//	POST   api/logout                ends the login
//	GET    api/children?path=        children with their child counts (first 1000)
//	GET    api/node?path=            stat, ACL and data as text / JSON / hex
//	PUT    api/node                  set data: {path, data, encoding, version}
//	POST   api/node                  create: {path, data, encoding, mode, acl}
//	DELETE api/node?path=&version=   delete
//	GET    api/search?path=&q=       paths containing q under path, bounded
//	GET    api/sessions              every session, its ephemerals and watches
//	GET    api/ensemble              every member's mode, zxid, lag, connections
//	GET    api/stats                 chart samples and the current mntr values
//
// Status codes: 400 a malformed request, 401 a write without a login,
// 403 refused by a node's ACL (ZooKeeper's NoAuth) or a cross-site
// request, 404 no such node, 409 BadVersion / NodeExists / NotEmpty,
// 503 the server cannot be reached, 504 it did not answer in time.
//
// # Identity and safety
//
// Every ZooKeeper operation goes through a session of the console
// connected to the server's own client address, so ZooKeeper's ACLs
// decide what a viewer may do. Anonymous viewers share one session with
// the world identity and may only read: writes without a login are
// refused with 401 whatever the ACL says. Logging in opens a session
// for the viewer and runs addAuth("digest", "user:password") on it (a
// login matching the server's superDigest is super); the browser gets
// only a random token in an HttpOnly, SameSite=Strict cookie, and the
// password is not kept by the console (the client session holds it for
// its reconnects). A login ends on logout, after Options.LoginIdle
// without use, when Options.MaxLogins are taken (least recently used
// first), and on Close.
//
// State-changing requests need the X-Warden-Console header (a page of
// another origin cannot send it without a CORS preflight, never
// granted), a JSON body, and a same-origin Origin / Sec-Fetch-Site when
// the browser sends them. The page puts server data in the DOM as text
// only (node data, paths and ACL ids are untrusted).
//
// # Charts
//
// A sampler reads srv.Monitor() every Options.SampleInterval into a ring
// of Options.History samples (history is pure: readings in, samples
// out): requests/s from packets_received deltas, avg/max latency,
// connections and outstanding requests. The page polls api/stats every
// two seconds while the charts are shown.
//
// # Goroutines
//
// New starts one sampler goroutine; Close stops it and closes every
// ZooKeeper session (pool.close). The pool's locks: worldMu, then mu;
// neither is held across a network call except worldMu while the
// anonymous session connects.
package console
