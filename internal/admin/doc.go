// Package admin is Warden's AdminServer: ZooKeeper 3.5–3.9's HTTP
// admin commands, answering JSON in ZooKeeper's shape, so the scripts,
// dashboards and probes written for ZooKeeper's AdminServer work
// unchanged.
//
// Start listens on admin.serverAddress:admin.serverPort (0.0.0.0:8080)
// and serves, under admin.commandURL (/commands):
//
//	GET  /commands             an HTML page of links, one per command
//	GET  /commands/<name>      runs a command by its name or an alias
//	POST /commands/restore     (and shed_connections) with a body
//
// Every reply is a JSON object indented as Jackson's default pretty
// printer writes it, with snake_case keys: the command's own fields, then
// "command" (the primary name) and "error" (null when fine). An unknown
// command answers 200 with "Unknown command: <name>", as ZooKeeper does.
// snapshot, restore and shed_connections need an Authorization header
// ("digest user:password" or "ip") whose identity holds ALL on the root
// znode, or is super; see authorize. snapshot streams Warden's snapshot
// format (the one `warden snapshot` reads), not ZooKeeper's.
//
// The commands read the server through its structured views
// (server.Stats, Connections, Watches, Monitor, ...), the same figures
// the four-letter words print. docs/admin.md lists the commands and every
// difference from ZooKeeper.
//
// Server.Handle mounts other handlers (the web console at /ui/) on the
// same listener.
package admin
