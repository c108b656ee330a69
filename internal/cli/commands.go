package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/wire"
)

// command is one shell command: zkCli.sh's usage text, its options, and
// what it does.
type command struct {
	name  string
	usage string // after the name, as zkCli.sh prints it
	// bools are the one-letter boolean options; values the options that
	// take a value ("v" for -v version).
	bools  string
	values []string
	// group lists the one-letter options of a commons-cli option group:
	// at most one of them may be given. With groupRequired one must be,
	// and groupUsage is the group as the error names it ("-n num soft
	// quota, -b ...").
	group         string
	groupRequired bool
	groupUsage    string
	// minArgs is the number of positional arguments below which the usage
	// is printed as the error.
	minArgs int
	// json: the command takes --json. offline: it runs without a session.
	// command: what follows "--" is a command to run (invocation.rest),
	// not positional arguments.
	json, offline, command bool
	// help is a one-line description (completion shows it).
	help string
	run  func(ctx context.Context, s *Shell, inv *invocation) error
}

func (c *command) valueFlag(name string) (string, bool) {
	for _, v := range c.values {
		if v == name {
			return v, true
		}
	}
	return "", false
}

// known reports whether name is one of the command's options.
func (c *command) known(name string) bool {
	if _, ok := c.valueFlag(name); ok {
		return true
	}
	return len(name) == 1 && strings.Contains(c.bools, name)
}

// isOption is DefaultParser.isOption: whether token names an option of
// the command (then it cannot be an option's value), alone or as the
// first of bundled ones, with or without "=value".
func (c *command) isOption(token string) bool {
	if token == "--json" {
		return c.json
	}
	if len(token) < 2 || token[0] != '-' {
		return false
	}
	name, _, _ := strings.Cut(token[1:], "=")
	return c.known(name) || (name != "" && c.known(name[:1]))
}

// commands is the command table, by name; filled by init (redo runs
// commands, so the table cannot be a plain initialised variable).
var commands = map[string]*command{}

func register(cs ...*command) {
	for _, c := range cs {
		commands[c.name] = c
	}
}

func init() {
	register(
		&command{name: "connect", usage: "host:port", offline: true, help: "open a session to other servers", run: runConnect},
		&command{name: "close", usage: "", help: "close the session", run: runClose},
		&command{name: "quit", usage: "", offline: true, help: "leave the shell", run: runQuit},
		&command{name: "ls", usage: "[-s] [-w] [-R] path", bools: "swR", minArgs: 1, json: true, help: "list children", run: runLs},
		&command{name: "get", usage: "[-s] [-w] path", bools: "sw", minArgs: 1, json: true, help: "print a node's data", run: runGet},
		&command{name: "set", usage: "[-s] [-v version] path data", bools: "s", values: []string{"v"}, minArgs: 2, help: "set a node's data", run: runSet},
		&command{name: "create", usage: "[-s] [-e] [-c] [-t ttl] path [data] [acl]", bools: "sec", values: []string{"t"}, minArgs: 1, help: "create a node", run: runCreate},
		&command{name: "delete", usage: "[-v version] path", values: []string{"v"}, minArgs: 1, help: "delete a node", run: runDelete},
		&command{name: "deleteall", usage: "path [-b batch size]", values: []string{"b"}, minArgs: 1, help: "delete a subtree", run: runDeleteAll},
		&command{name: "stat", usage: "[-w] path", bools: "w", minArgs: 1, json: true, help: "print a node's stat", run: runStat},
		&command{name: "getAcl", usage: "[-s] path", bools: "s", minArgs: 1, json: true, help: "print a node's ACL", run: runGetACL},
		&command{name: "setAcl", usage: "[-s] [-v version] [-R] path acl", bools: "sR", values: []string{"v"}, minArgs: 2, help: "set a node's ACL", run: runSetACL},
		&command{name: "addauth", usage: "scheme auth", minArgs: 1, help: "add an identity to the session", run: runAddAuth},
		&command{name: "sync", usage: "path", minArgs: 1, help: "sync the server with the leader", run: runSync},
		&command{name: "getEphemerals", usage: "path", json: true, help: "list this session's ephemeral nodes", run: runGetEphemerals},
		&command{name: "getAllChildrenNumber", usage: "path", minArgs: 1, json: true, help: "count the descendants of a node", run: runAllChildren},
		&command{name: "addWatch", usage: "[-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE", values: []string{"m"}, minArgs: 1, help: "add a persistent watch", run: runAddWatch},
		&command{name: "removewatches", usage: "path [-c|-d|-a] [-l]", bools: "cdal", minArgs: 1, help: "remove watches", run: runRemoveWatches},
		&command{name: "whoami", usage: "", json: true, help: "print the session's identities", run: runWhoAmI},
		&command{name: "config", usage: "[-c] [-w] [-s]", bools: "cws", json: true, help: "print the ensemble's configuration", run: runConfig},
		&command{name: "reconfig", usage: "[-s] [-v version] [[-file path] | [-members serverID=host:port1:port2;port3[,...]*]] | [-add serverId=host:port1:port2;port3[,...]]* [-remove serverId[,...]*]", bools: "s", values: []string{"v", "file", "members", "add", "remove"}, help: "change the ensemble's membership", run: runReconfig},
		&command{name: "printwatches", usage: "on|off", offline: true, help: "show or hide watch events", run: runPrintWatches},
		&command{name: "history", usage: "", offline: true, help: "list recent commands", run: runHistory},
		&command{name: "redo", usage: "cmdno", minArgs: 1, offline: true, help: "run a command from the history again", run: runRedo},
		&command{name: "version", usage: "", offline: true, json: true, help: "print the CLI version", run: runVersion},
	)
	registerQuota()
	registerExtra()
}

// pathArg returns positional argument i, validated as a znode path.
func pathArg(inv *invocation, i int) (string, error) {
	p := inv.args[i]
	if err := validatePath(p, false); err != nil {
		return "", err
	}
	return p, nil
}

// opError turns a failed operation into zkCli.sh's message for path.
func opError(err error, path string) error {
	return errors.New(errorText(err, path))
}

// intFlag parses option name as an int32 (ZooKeeper's version numbers).
func intFlag(inv *invocation, name string, def int32) (int32, error) {
	v, ok := inv.flags[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 0, 32)
	if err != nil {
		return 0, fmt.Errorf("-%s argument must be an int value", name)
	}
	return int32(n), nil
}

func runConnect(ctx context.Context, s *Shell, inv *invocation) error {
	host := ""
	if len(inv.args) > 0 {
		host = inv.args[0]
	}
	return s.Connect(ctx, host)
}

func runClose(ctx context.Context, s *Shell, inv *invocation) error {
	s.closeConn()
	return nil
}

func runQuit(ctx context.Context, s *Shell, inv *invocation) error {
	s.closeConn()
	return ErrQuit
}

func runLs(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	c := s.Conn()
	octx, cancel := s.opContext(ctx)
	defer cancel()
	if inv.has("R") {
		paths, err := subtree(octx, c, p, inv.has("w"), s)
		if err != nil {
			return opError(err, p)
		}
		if inv.json {
			return writeJSON(s.out(), paths)
		}
		var b strings.Builder
		for _, q := range paths {
			b.WriteString(q + "\n")
		}
		_, err = fmt.Fprint(s.out(), b.String())
		return err
	}
	var kids []string
	var st client.Stat
	if inv.has("w") {
		var ch <-chan client.Event
		kids, st, ch, err = c.ChildrenW(octx, p)
		s.forward(ch)
	} else {
		kids, st, err = c.Children(octx, p)
	}
	if err != nil {
		return opError(err, p)
	}
	sort.Strings(kids)
	if inv.json {
		v := map[string]any{"path": p, "children": nonNil(kids)}
		if inv.has("s") {
			v["stat"] = statJSON(st)
		}
		return writeJSON(s.out(), v)
	}
	var b strings.Builder
	b.WriteString("[" + strings.Join(kids, ", ") + "]\n")
	if inv.has("s") {
		writeStat(&b, st)
	}
	_, err = fmt.Fprint(s.out(), b.String())
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// subtree lists root and its descendants breadth first, children sorted
// (zkCli.sh's ls -R order), setting child watches when watch is set.
func subtree(ctx context.Context, c *client.Conn, root string, watch bool, s *Shell) ([]string, error) {
	out := []string{root}
	for i := 0; i < len(out); i++ {
		var kids []string
		var err error
		if watch {
			var ch <-chan client.Event
			kids, _, ch, err = c.ChildrenW(ctx, out[i])
			s.forward(ch)
		} else {
			kids, _, err = c.Children(ctx, out[i])
		}
		if errors.Is(err, client.ErrNoNode) && i > 0 {
			continue // deleted while we walked
		}
		if err != nil {
			return nil, err
		}
		sort.Strings(kids)
		for _, k := range kids {
			out = append(out, join(out[i], k))
		}
	}
	return out, nil
}

// join is path.Join for znode paths.
func join(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

func runGet(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	var data []byte
	var st client.Stat
	if inv.has("w") {
		var ch <-chan client.Event
		data, st, ch, err = s.Conn().GetW(octx, p)
		s.forward(ch)
	} else {
		data, st, err = s.Conn().Get(octx, p)
	}
	if err != nil {
		return opError(err, p)
	}
	if inv.json {
		v := map[string]any{"path": p, "data": encodeData(data).Data, "encoding": encodeData(data).Encoding}
		if inv.has("s") {
			v["stat"] = statJSON(st)
		}
		return writeJSON(s.out(), v)
	}
	var b strings.Builder
	if data == nil {
		b.WriteString("null\n")
	} else {
		b.Write(data)
		b.WriteByte('\n')
	}
	if inv.has("s") {
		writeStat(&b, st)
	}
	_, err = fmt.Fprint(s.out(), b.String())
	return err
}

func runSet(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	version, err := intFlag(inv, "v", -1)
	if err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	st, err := s.Conn().Set(octx, p, []byte(inv.args[1]), version)
	if err != nil {
		return opError(err, p)
	}
	if inv.has("s") {
		writeStat(s.out(), st)
	}
	return nil
}

// maxTTL is the largest TTL ZooKeeper accepts (EphemeralType.MAX_TTL).
const maxTTL = 1<<40 - 1

func runCreate(ctx context.Context, s *Shell, inv *invocation) error {
	seq, eph, cont := inv.has("s"), inv.has("e"), inv.has("c")
	if cont && (seq || eph) {
		return errors.New("-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
	}
	var ttl int64
	if v, ok := inv.flags["t"]; ok {
		if eph {
			return errors.New("TTLs cannot be used with Ephemeral znodes")
		}
		if cont {
			return errors.New("TTLs cannot be used with Container znodes")
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errors.New("-t argument must be a long value")
		}
		if n <= 0 || n > maxTTL {
			return fmt.Errorf("ttl must be positive and cannot be larger than: %d", int64(maxTTL))
		}
		ttl = n
	}
	p := inv.args[0]
	if err := validatePath(p, seq); err != nil {
		return err
	}
	var data []byte
	if len(inv.args) > 1 {
		data = []byte(inv.args[1])
	}
	acl := client.OpenACL
	if len(inv.args) > 2 {
		acl = parseACL(s.errw(), inv.args[2])
	}
	mode := client.Persistent
	switch {
	case seq && eph:
		mode = client.EphemeralSequential
	case seq && ttl > 0:
		mode = client.PersistentSequentialWithTTL
	case seq:
		mode = client.PersistentSequential
	case eph:
		mode = client.Ephemeral
	case ttl > 0:
		mode = client.PersistentWithTTL
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	var created string
	var err error
	switch {
	case len(acl) == 0:
		err = client.ErrInvalidACL
	case cont:
		created, _, err = s.Conn().CreateContainer(octx, p, data, acl)
	case ttl > 0:
		created, _, err = s.Conn().CreateTTL(octx, p, data, mode, acl, time.Duration(ttl)*time.Millisecond)
	default:
		created, err = s.Conn().Create(octx, p, data, mode, acl)
	}
	if errors.Is(err, client.ErrInvalidACL) {
		fmt.Fprintln(s.errw(), keeperText(wire.ErrInvalidACL, p))
	}
	if err != nil {
		return opError(err, p)
	}
	_, err = fmt.Fprintln(s.out(), "Created "+created)
	return err
}

func runDelete(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	version, err := intFlag(inv, "v", -1)
	if err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.Conn().Delete(octx, p, version); err != nil {
		return opError(err, p)
	}
	return nil
}

func runDeleteAll(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	batch, err := intFlag(inv, "b", 1000)
	if err != nil || batch <= 0 {
		return errors.New("-b argument must be an int value")
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	if err := deleteTree(octx, s.Conn(), p, int(batch)); err != nil {
		return opError(err, p)
	}
	return nil
}

// deleteTree deletes root and its descendants, deepest first, batch
// deletes per multi.
func deleteTree(ctx context.Context, c *client.Conn, root string, batch int) error {
	paths, err := subtree(ctx, c, root, false, nil)
	if err != nil {
		return err
	}
	for end := len(paths); end > 0; end -= batch {
		start := max(0, end-batch)
		ops := make([]client.Op, 0, end-start)
		for i := end - 1; i >= start; i-- {
			ops = append(ops, client.DeleteOp(paths[i], -1))
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			return err
		}
	}
	return nil
}

func runStat(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	var st client.Stat
	var ok bool
	if inv.has("w") {
		var ch <-chan client.Event
		st, ok, ch, err = s.Conn().ExistsW(octx, p)
		s.forward(ch)
	} else {
		st, ok, err = s.Conn().Exists(octx, p)
	}
	if err == nil && !ok {
		err = client.ErrNoNode
	}
	if err != nil {
		return opError(err, p)
	}
	if inv.json {
		return writeJSON(s.out(), map[string]any{"path": p, "stat": statJSON(st)})
	}
	writeStat(s.out(), st)
	return nil
}

func runGetACL(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	acl, st, err := s.Conn().GetACL(octx, p)
	if err != nil {
		return opError(err, p)
	}
	if inv.json {
		v := map[string]any{"path": p, "acl": aclJSON(acl)}
		if inv.has("s") {
			v["stat"] = statJSON(st)
		}
		return writeJSON(s.out(), v)
	}
	var b strings.Builder
	writeACL(&b, acl)
	if inv.has("s") {
		writeStat(&b, st)
	}
	_, err = fmt.Fprint(s.out(), b.String())
	return err
}

func runSetACL(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	version, err := intFlag(inv, "v", -1)
	if err != nil {
		return err
	}
	acl := parseACL(s.errw(), inv.args[1])
	if len(acl) == 0 {
		return errors.New("Acl is not valid : null")
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	c := s.Conn()
	if inv.has("R") {
		paths, err := subtree(octx, c, p, false, nil)
		if err != nil {
			return opError(err, p)
		}
		for _, q := range paths {
			if _, err := c.SetACL(octx, q, acl, -1); err != nil {
				return errors.New(keeperText(wire.CodeOf(err), q))
			}
		}
		return nil
	}
	st, err := c.SetACL(octx, p, acl, version)
	if err != nil {
		return opError(err, p)
	}
	if inv.has("s") {
		writeStat(s.out(), st)
	}
	return nil
}

func runAddAuth(ctx context.Context, s *Shell, inv *invocation) error {
	var auth []byte
	if len(inv.args) > 1 {
		auth = []byte(inv.args[1])
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.Conn().AddAuth(octx, inv.args[0], auth); err != nil {
		return errors.New(keeperText(wire.CodeOf(err), ""))
	}
	return nil
}

func runSync(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.Conn().Sync(octx, p); err != nil {
		return fmt.Errorf("Sync has failed. rc=%d", int32(wire.CodeOf(err)))
	}
	_, err = fmt.Fprintln(s.out(), "Sync is OK")
	return err
}

func runGetEphemerals(ctx context.Context, s *Shell, inv *invocation) error {
	p := "/"
	if len(inv.args) > 0 {
		p = inv.args[0]
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	eph, err := s.Conn().Ephemerals(octx, p)
	if err != nil {
		return opError(err, p)
	}
	sort.Strings(eph)
	if inv.json {
		return writeJSON(s.out(), nonNil(eph))
	}
	_, err = fmt.Fprintln(s.out(), "["+strings.Join(eph, ", ")+"]")
	return err
}

func runAllChildren(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	n, err := s.Conn().AllChildrenNumber(octx, p)
	if err != nil {
		return opError(err, p)
	}
	if inv.json {
		return writeJSON(s.out(), map[string]any{"path": p, "count": n})
	}
	_, err = fmt.Fprintln(s.out(), n)
	return err
}

func runAddWatch(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	recursive := true
	switch inv.flags["m"] {
	case "", "PERSISTENT_RECURSIVE":
	case "PERSISTENT":
		recursive = false
	default:
		return errors.New("addWatch " + commands["addWatch"].usage)
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	w, err := s.Conn().AddWatch(octx, p, recursive)
	if err != nil {
		return opError(err, p)
	}
	s.forward(w.Events())
	return nil
}

func runRemoveWatches(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	t := wire.WatcherAny
	switch {
	case inv.has("c"):
		t = wire.WatcherChildren
	case inv.has("d"):
		t = wire.WatcherData
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.Conn().RemoveAllWatches(octx, p, t); err != nil {
		return errors.New(keeperText(wire.CodeOf(err), p))
	}
	return nil
}

func runWhoAmI(ctx context.Context, s *Shell, inv *invocation) error {
	octx, cancel := s.opContext(ctx)
	defer cancel()
	ids, err := s.Conn().WhoAmI(octx)
	if err != nil {
		return errors.New(keeperText(wire.CodeOf(err), ""))
	}
	if inv.json {
		out := make([]map[string]string, len(ids))
		for i, id := range ids {
			out[i] = map[string]string{"scheme": id.AuthScheme, "user": id.User}
		}
		return writeJSON(s.out(), out)
	}
	var b strings.Builder
	b.WriteString("Auth scheme: User\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "%s: %s\n", id.AuthScheme, id.User)
	}
	_, err = fmt.Fprint(s.out(), b.String())
	return err
}

func runPrintWatches(ctx context.Context, s *Shell, inv *invocation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(inv.args) == 0 {
		state := "off"
		if s.printWatches {
			state = "on"
		}
		_, err := fmt.Fprintln(s.cfg.Out, "printwatches is "+state)
		return err
	}
	s.printWatches = inv.args[0] == "on"
	return nil
}

func runHistory(ctx context.Context, s *Shell, inv *invocation) error {
	var b strings.Builder
	for i := max(0, s.count-10); i <= s.count; i++ {
		line, ok := s.history[i]
		if !ok {
			line = "null"
		}
		fmt.Fprintf(&b, "%d - %s\n", i, line)
	}
	_, err := fmt.Fprint(s.out(), b.String())
	return err
}

func runRedo(ctx context.Context, s *Shell, inv *invocation) error {
	i, err := strconv.ParseInt(inv.args[0], 0, 32)
	if err != nil || int(i) >= s.count || i < 0 {
		return errors.New("Command index out of range")
	}
	line := s.history[int(i)]
	argv := splitLine(line)
	if len(argv) > 0 && argv[0] == "redo" {
		return errors.New("No redoing redos")
	}
	s.history[s.count] = line
	return s.run(ctx, argv)
}

func runVersion(ctx context.Context, s *Shell, inv *invocation) error {
	if inv.json {
		return writeJSON(s.out(), map[string]string{"version": s.cfg.Version})
	}
	_, err := fmt.Fprintln(s.out(), "ZooKeeper CLI version: "+s.cfg.Version)
	return err
}
