package containerenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wardenzk/warden/internal/config"
)

// DefaultServers is ZOO_SERVERS's default: one member, standalone.
const DefaultServers = "server.1=localhost:2888:3888;2181"

// Env is the official image's environment after defaults. Numbers and
// booleans are kept as text: they are written to zoo.cfg as given, once
// Validate has checked them.
type Env struct {
	ConfDir    string // ZOO_CONF_DIR, default /conf
	DataDir    string // ZOO_DATA_DIR, default /data
	DataLogDir string // ZOO_DATA_LOG_DIR, default /datalog
	LogDir     string // ZOO_LOG_DIR, default /logs

	MyID string // ZOO_MY_ID, default 1: a positive server id

	TickTime                 string // ZOO_TICK_TIME, milliseconds, default 2000
	InitLimit                string // ZOO_INIT_LIMIT, ticks, default 5
	SyncLimit                string // ZOO_SYNC_LIMIT, ticks, default 2
	AutopurgeSnapRetainCount string // ZOO_AUTOPURGE_SNAPRETAINCOUNT, default 3
	AutopurgePurgeInterval   string // ZOO_AUTOPURGE_PURGEINTERVAL, hours, default 0 (off)
	MaxClientCnxns           string // ZOO_MAX_CLIENT_CNXNS, per client IP, default 60
	StandaloneEnabled        string // ZOO_STANDALONE_ENABLED, true|false, default true
	AdminServerEnabled       string // ZOO_ADMINSERVER_ENABLED, true|false, default true

	// Servers are the words of ZOO_SERVERS, each a server.N line;
	// default [DefaultServers].
	Servers []string
	// FourLetterWhitelist is ZOO_4LW_COMMANDS_WHITELIST; "" writes no
	// 4lw.commands.whitelist line.
	FourLetterWhitelist string
	// Extra are the words of ZOO_CFG_EXTRA, each a key=value line.
	Extra []string
}

// variable is one single-valued variable of the contract: its name, its
// default, the zoo.cfg key it is written as ("" for none), what Validate
// asks of it, and the Env field holding it.
type variable struct {
	name, def, key string
	kind           kind
	field          func(*Env) *string
}

// variables are the single-valued variables, the keyed ones in zoo.cfg
// order.
var variables = []variable{
	{"ZOO_CONF_DIR", "/conf", "", kindPath, func(e *Env) *string { return &e.ConfDir }},
	{"ZOO_DATA_DIR", "/data", "dataDir", kindPath, func(e *Env) *string { return &e.DataDir }},
	{"ZOO_DATA_LOG_DIR", "/datalog", "dataLogDir", kindPath, func(e *Env) *string { return &e.DataLogDir }},
	{"ZOO_LOG_DIR", "/logs", "", kindPath, func(e *Env) *string { return &e.LogDir }},
	{"ZOO_TICK_TIME", "2000", "tickTime", kindPositive, func(e *Env) *string { return &e.TickTime }},
	{"ZOO_INIT_LIMIT", "5", "initLimit", kindPositive, func(e *Env) *string { return &e.InitLimit }},
	{"ZOO_SYNC_LIMIT", "2", "syncLimit", kindPositive, func(e *Env) *string { return &e.SyncLimit }},
	{"ZOO_AUTOPURGE_SNAPRETAINCOUNT", "3", "autopurge.snapRetainCount", kindNatural, func(e *Env) *string { return &e.AutopurgeSnapRetainCount }},
	{"ZOO_AUTOPURGE_PURGEINTERVAL", "0", "autopurge.purgeInterval", kindNatural, func(e *Env) *string { return &e.AutopurgePurgeInterval }},
	{"ZOO_MAX_CLIENT_CNXNS", "60", "maxClientCnxns", kindNatural, func(e *Env) *string { return &e.MaxClientCnxns }},
	{"ZOO_STANDALONE_ENABLED", "true", "standaloneEnabled", kindBool, func(e *Env) *string { return &e.StandaloneEnabled }},
	{"ZOO_ADMINSERVER_ENABLED", "true", "admin.enableServer", kindBool, func(e *Env) *string { return &e.AdminServerEnabled }},
	{"ZOO_MY_ID", "1", "", kindPositive, func(e *Env) *string { return &e.MyID }},
}

// kind is what Validate asks of a variable's value.
type kind int

const (
	kindPath     kind = iota // an absolute path
	kindPositive             // a decimal integer > 0
	kindNatural              // a decimal integer >= 0
	kindBool                 // true or false
)

// Lookup reads the contract's variables through lookup (os.LookupEnv in
// production); a variable that is unset or empty takes its default.
func Lookup(lookup func(string) (string, bool)) Env {
	get := func(name, def string) string {
		if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	var e Env
	for _, v := range variables {
		*v.field(&e) = get(v.name, v.def)
	}
	e.Servers = strings.Fields(get("ZOO_SERVERS", DefaultServers))
	e.FourLetterWhitelist = get("ZOO_4LW_COMMANDS_WHITELIST", "")
	e.Extra = strings.Fields(get("ZOO_CFG_EXTRA", ""))
	return e
}

// ErrInvalid is wrapped by every error of Validate.
var ErrInvalid = errors.New("containerenv: invalid environment")

// Validate reports the first variable whose value zoo.cfg or myid could
// not use, naming the variable and what it should be.
func (e Env) Validate() error {
	bad := func(name, value, want string) error {
		return fmt.Errorf("%s=%q: %s: %w", name, value, want, ErrInvalid)
	}
	// zoo.cfg is a properties file: a backslash there is an escape, a
	// newline ends the line, control characters at either end are trimmed,
	// and a file that is not UTF-8 is read as ISO-8859-1 throughout. Such a
	// value would reach the server changed ("/a\b" as "/ab"), as another
	// line, or would change the others.
	verbatim := func(name, value string) error {
		if strings.ContainsFunc(value, func(r rune) bool { return r == '\\' || r < ' ' }) || !utf8.ValidString(value) {
			return bad(name, value, "a backslash, a control character or invalid UTF-8 cannot be written to zoo.cfg as it is")
		}
		return nil
	}
	if err := verbatim("ZOO_4LW_COMMANDS_WHITELIST", e.FourLetterWhitelist); err != nil {
		return err
	}
	for _, v := range variables {
		val := *v.field(&e)
		if err := verbatim(v.name, val); err != nil {
			return err
		}
		switch v.kind {
		case kindPath:
			if !filepath.IsAbs(val) {
				return bad(v.name, val, "want an absolute path")
			}
		case kindPositive, kindNatural:
			n, err := strconv.ParseInt(val, 10, 32)
			if err != nil || n < 0 || (n == 0 && v.kind == kindPositive) {
				want := "a whole number, 0 or more"
				if v.kind == kindPositive {
					want = "a whole number above 0"
				}
				return bad(v.name, val, fmt.Sprintf("want %s (default %s)", want, v.def))
			}
		case kindBool:
			if val != "true" && val != "false" {
				return bad(v.name, val, fmt.Sprintf("want true or false (default %s)", v.def))
			}
		}
	}
	if len(e.Servers) == 0 {
		return bad("ZOO_SERVERS", "", "want at least one server.N line")
	}
	for _, s := range e.Servers {
		if !utf8.ValidString(s) {
			return bad("ZOO_SERVERS", strings.Join(e.Servers, " "), "want UTF-8 text")
		}
		if !strings.HasPrefix(s, "server.") {
			return bad("ZOO_SERVERS", strings.Join(e.Servers, " "),
				fmt.Sprintf("%q is not a server.N=host:2888:3888[;2181] line (separate lines with spaces)", s))
		}
		if err := parseLine(s); err != nil {
			return bad("ZOO_SERVERS", strings.Join(e.Servers, " "),
				fmt.Sprintf("%v (separate lines with spaces)", err))
		}
	}
	for _, kv := range e.Extra {
		if !utf8.ValidString(kv) {
			return bad("ZOO_CFG_EXTRA", strings.Join(e.Extra, " "), "want UTF-8 text")
		}
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return bad("ZOO_CFG_EXTRA", strings.Join(e.Extra, " "),
				fmt.Sprintf("%q is not key=value (separate entries with spaces)", kv))
		}
		if err := parseLine(kv); err != nil {
			return bad("ZOO_CFG_EXTRA", strings.Join(e.Extra, " "), err.Error())
		}
	}
	// Lines that parse alone may still contradict each other (an extra
	// dynamicConfigFile with the server lines).
	if err := parseLine(e.ZooCfg()); err != nil {
		return bad("ZOO_CFG_EXTRA", strings.Join(e.Extra, " "), fmt.Sprintf("the zoo.cfg written with it is refused: %v", err))
	}
	return nil
}

// parseLine reads zoo.cfg text (one line, or the whole file) as the
// server will, so that a bad server line or extra entry is reported
// against its variable.
func parseLine(line string) error {
	_, err := config.Parse(strings.NewReader(line), "")
	return err
}

// ZooCfg is the zoo.cfg the official entrypoint writes for e (see the
// package documentation for the layout). Call Validate first.
func (e Env) ZooCfg() string {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	if !e.serversNameClientPort() {
		line("clientPort", "2181")
	}
	for _, v := range variables {
		if v.key != "" {
			line(v.key, *v.field(&e))
		}
	}
	for _, s := range e.Servers {
		b.WriteString(s + "\n")
	}
	if e.FourLetterWhitelist != "" {
		line("4lw.commands.whitelist", e.FourLetterWhitelist)
	}
	for _, kv := range e.Extra {
		b.WriteString(kv + "\n")
	}
	return b.String()
}

// serversNameClientPort reports whether some server line has a client
// part (";[host:]port").
func (e Env) serversNameClientPort() bool {
	for _, s := range e.Servers {
		if strings.Contains(s, ";") {
			return true
		}
	}
	return false
}

// ConfigPath is $ZOO_CONF_DIR/zoo.cfg.
func (e Env) ConfigPath() string { return filepath.Join(e.ConfDir, "zoo.cfg") }

// MyIDPath is $ZOO_DATA_DIR/myid.
func (e Env) MyIDPath() string { return filepath.Join(e.DataDir, "myid") }

// Result says what Prepare did.
type Result struct {
	// ConfigPath is the zoo.cfg to start the server with.
	ConfigPath string
	// ConfigWritten is true when Prepare generated it, false when an
	// existing one was kept.
	ConfigWritten bool
	// MyIDWritten is true when Prepare wrote $ZOO_DATA_DIR/myid, false
	// when an existing one was kept.
	MyIDWritten bool
}

// Prepare validates e, creates the four directories when missing (0755),
// then writes zoo.cfg and myid, each only when it does not exist yet. An
// existing file is never read or changed: a mounted zoo.cfg wins, and a
// member keeps its id across restarts.
func Prepare(e Env) (Result, error) {
	if err := e.Validate(); err != nil {
		return Result{}, err
	}
	for _, dir := range []string{e.ConfDir, e.DataDir, e.DataLogDir, e.LogDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Result{}, fmt.Errorf("containerenv: create %s: %w (%s)", dir, err, writableHint())
		}
	}
	res := Result{ConfigPath: e.ConfigPath()}
	var err error
	if res.ConfigWritten, err = writeIfAbsent(res.ConfigPath, e.ZooCfg()); err != nil {
		return Result{}, err
	}
	if res.MyIDWritten, err = writeIfAbsent(e.MyIDPath(), e.MyID+"\n"); err != nil {
		return Result{}, err
	}
	return res, nil
}

// writableHint says what to do about a directory the server cannot write.
func writableHint() string {
	return fmt.Sprintf("the directory must be writable by uid %d: on the host, chown %d:%d the mounted directory",
		os.Getuid(), os.Getuid(), os.Getgid())
}

// writeIfAbsent writes text to path unless path exists, through a
// temporary file and a rename, and reports whether it wrote.
func writeIfAbsent(path, text string) (bool, error) {
	if _, err := os.Lstat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("containerenv: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return false, fmt.Errorf("containerenv: write %s: %w (%s)", path, err, writableHint())
	}
	tmp := f.Name()
	_, err = f.WriteString(text)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("containerenv: write %s: %w", path, err)
	}
	return true, nil
}
