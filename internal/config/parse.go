package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Parse reads a zoo.cfg from r, starting from ZooKeeper's defaults. It
// does not read myid, follow dynamicConfigFile or call Validate: Load does.
//
// Relative dataDir, dataLogDir, dynamicConfigFile and JAAS paths are joined
// to baseDir when baseDir is not empty; with "" they stay relative to the
// working directory, as in ZooKeeper.
//
// A malformed value is an error naming the key and line, wrapping
// ErrInvalid. An unknown key is only a warning in Config.Warnings.
func Parse(r io.Reader, baseDir string) (Config, error) {
	c := zkDefaults()
	props, err := parseProperties(r)
	if err != nil {
		return Config{}, err
	}
	dataLogDirSet := false
	for _, p := range props {
		c.Raw[p.key] = p.value
		a := assignment{c: &c, key: p.key, value: p.value, line: p.line}
		if err := a.apply(); err != nil {
			return Config{}, err
		}
		dataLogDirSet = dataLogDirSet || canonicalKey(p.key) == "dataLogDir"
		if canonicalKey(p.key) == "dynamicConfigFile" && hasServerLines(props) {
			return Config{}, a.fail("server.N lines must then be in the dynamic config file")
		}
	}
	if !dataLogDirSet {
		c.DataLogDir = c.DataDir
	}
	if c.AutopurgeSnapRetainCount < 3 {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"autopurge.snapRetainCount: %d is below the minimum; using 3", c.AutopurgeSnapRetainCount))
		c.AutopurgeSnapRetainCount = 3
	}
	if baseDir != "" {
		for _, p := range []*string{&c.DataDir, &c.DataLogDir, &c.DynamicConfigFile, &c.JAASConfigFile} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(baseDir, *p)
			}
		}
	}
	slices.SortFunc(c.Servers, func(x, y Server) int { return compareInt64(x.ID, y.ID) })
	return c, nil
}

func hasServerLines(props []property) bool {
	for _, p := range props {
		if strings.HasPrefix(canonicalKey(p.key), "server.") {
			return true
		}
	}
	return false
}

func compareInt64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// Load reads the zoo.cfg at path, then the dynamic config file it names
// (server.N lines and version only), then dataDir/myid when there are
// server.N lines, and validates the result. Relative paths inside the file
// are relative to the working directory, as in ZooKeeper.
func Load(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	c, err := Parse(f, "")
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	c.File = path
	if c.DynamicConfigFile != "" {
		if err := c.loadDynamic(c.DynamicConfigFile); err != nil {
			return Config{}, err
		}
	}
	if len(c.Servers) > 0 && c.DataDir != "" {
		id, err := ReadMyID(c.DataDir)
		switch {
		case err == nil:
			c.MyID = id
		case !errors.Is(err, fs.ErrNotExist):
			return Config{}, err
		}
		if err := c.adoptClientAddress(); err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// loadDynamic reads a dynamic config file: only server.N, group.N,
// weight.N and version keys are allowed.
func (c *Config) loadDynamic(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config: dynamicConfigFile: %w", err)
	}
	defer f.Close()
	props, err := parseProperties(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, p := range props {
		a := assignment{c: c, key: p.key, value: p.value, line: p.line}
		switch {
		case p.key == "version":
			if _, err := strconv.ParseUint(p.value, 16, 64); err != nil {
				return fmt.Errorf("%s: %w", path, a.fail("version is not a hex number"))
			}
		case strings.HasPrefix(p.key, "server."), strings.HasPrefix(p.key, "group."), strings.HasPrefix(p.key, "weight."):
			if err := a.apply(); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		default:
			return fmt.Errorf("%s: %w", path, a.fail("unrecognised parameter in a dynamic config file"))
		}
	}
	slices.SortFunc(c.Servers, func(x, y Server) int { return compareInt64(x.ID, y.ID) })
	return nil
}

// adoptClientAddress makes this server's client address the one of its
// server.N line when that line has one, refusing a clientPort that
// contradicts it (ZooKeeper's QuorumPeerConfig.setupClientPort).
func (c *Config) adoptClientAddress() error {
	self, ok := c.Self()
	if !ok || self.ClientPort == 0 {
		return nil
	}
	if c.ClientPort != 0 {
		wildcard := c.ClientPortAddress == "" || c.ClientPortAddress == "0.0.0.0" || c.ClientPortAddress == "::"
		if c.ClientPort != self.ClientPort || (!wildcard && c.ClientPortAddress != self.ClientHost) {
			return fmt.Errorf("config: client address %s:%d differs from %s:%d in server.%d: %w",
				c.ClientPortAddress, c.ClientPort, self.ClientHost, self.ClientPort, self.ID, ErrInvalid)
		}
	}
	c.ClientPort = self.ClientPort
	c.ClientPortAddress = self.ClientHost
	return nil
}

// ReadMyID reads the server id from dir/myid: a decimal number on the first
// line. A missing file gives an error wrapping fs.ErrNotExist.
func ReadMyID(dir string) (int64, error) {
	data, err := os.ReadFile(filepath.Join(dir, "myid"))
	if err != nil {
		return 0, fmt.Errorf("config: myid: %w", err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	first = strings.TrimSpace(first)
	id, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("config: %s: serverid %q is not a number: %w",
			filepath.Join(dir, "myid"), first, ErrInvalid)
	}
	return id, nil
}
