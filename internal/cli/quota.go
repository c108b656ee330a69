package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/quota"
)

// The quota commands are zkCli.sh 3.8's SetQuotaCommand, ListQuotaCommand
// and DelQuotaCommand: the same requests in the same order, the same
// messages on the same stream. Messages zkCli.sh prints and then returns
// normally with (bad option values, "Quota does not exist for ...") leave
// the exit status 0, as zkCli.sh does.

// quotaGroup is the option group of setquota and delquota as commons-cli
// prints it in "Missing required option: [...]".
const quotaGroup = "-n num soft quota, -b bytes soft quota, -N num hard quota, -B bytes hard quota"

func registerQuota() {
	register(
		&command{name: "setquota", usage: "-n|-b|-N|-B val path", values: []string{"n", "b", "N", "B"},
			group: "nbNB", groupRequired: true, groupUsage: quotaGroup, minArgs: 1,
			help: "set a soft (-n nodes, -b bytes) or hard (-N, -B) quota on a path", run: runSetQuota},
		&command{name: "listquota", usage: "path", minArgs: 1, help: "print a path's quota and usage", run: runListQuota},
		&command{name: "delquota", usage: "[-n|-b|-N|-B] path", bools: "nbNB", group: "nbNB", minArgs: 1,
			help: "remove a path's quota, or one of its limits", run: runDelQuota},
	)
}

// errQuotaText reports quota text that ZooKeeper's StatsTrack cannot read
// (zkCli.sh stops with a stack trace there).
func errQuotaText(path string, err error) error {
	return fmt.Errorf("cannot read the quota text of %s (%v); fix it with set, or remove the quota with delquota", path, err)
}

// quotaLimits are the options of setquota and delquota: the StatsTrack
// key each sets, and the size of its value (Integer.parseInt for counts,
// Long.parseLong for bytes).
var quotaLimits = []struct {
	flag, key string
	bits      int
}{
	{"n", quota.KeyCount, 32},
	{"b", quota.KeyBytes, 64},
	{"N", quota.KeyCountHardLimit, 32},
	{"B", quota.KeyByteHardLimit, 64},
}

func runSetQuota(ctx context.Context, s *Shell, inv *invocation) error {
	p := inv.args[0]
	if strings.HasPrefix(p, quota.Path) {
		fmt.Fprintln(s.errw(), "cannot set a quota under the path: "+quota.Path)
		return nil
	}
	limits := quota.Stats{quota.KeyCount: -1, quota.KeyBytes: -1, quota.KeyCountHardLimit: -1, quota.KeyByteHardLimit: -1}
	for _, l := range quotaLimits {
		v, ok := inv.flags[l.flag]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, l.bits)
		switch {
		case err != nil:
			fmt.Fprintln(s.errw(), "NumberFormatException happens when parsing the option value")
			return nil
		case l.bits == 32 && n <= 0:
			fmt.Fprintln(s.errw(), "the num quota must be greater than zero")
			return nil
		case l.bits == 64 && n < 0:
			fmt.Fprintln(s.errw(), "the bytes quota must be greater than or equal to zero")
			return nil
		}
		limits[l.key] = n
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	return createQuota(octx, s, s.Conn(), p, limits)
}

// createQuota is SetQuotaCommand.createQuota.
func createQuota(ctx context.Context, s *Shell, c *client.Conn, p string, limits quota.Stats) error {
	if err := validatePath(p, false); err != nil {
		return err
	}
	if _, ok, err := c.Exists(ctx, p); err != nil {
		return opError(err, p)
	} else if !ok {
		return errors.New(p + " does not exist.")
	}
	if err := checkChildQuota(ctx, c, p); err != nil {
		return err
	}
	if err := checkParentQuota(ctx, c, p); err != nil {
		return err
	}
	if _, ok, err := c.Exists(ctx, quota.Path); err != nil {
		return opError(err, quota.Path)
	} else if !ok {
		// As zkCli.sh: one NodeExists skips the rest.
		for _, q := range []string{"/zookeeper", quota.Path} {
			if _, err := c.Create(ctx, q, nil, client.Persistent, client.OpenACL); errors.Is(err, client.ErrNodeExists) {
				break
			} else if err != nil {
				return opError(err, q)
			}
		}
	}
	qp := quota.Path
	for _, part := range strings.Split(p, "/")[1:] {
		qp += "/" + part
		if err := createIfMissing(ctx, c, qp, nil); err != nil {
			return err
		}
	}
	statsPath, limitsPath := qp+"/"+quota.StatsNode, qp+"/"+quota.LimitsNode
	_, ok, err := c.Exists(ctx, limitsPath)
	if err != nil {
		return opError(err, limitsPath)
	}
	if !ok {
		if _, err := c.Create(ctx, limitsPath, limits.Bytes(), client.Persistent, client.OpenACL); err != nil {
			return opError(err, limitsPath)
		}
		initial := quota.Stats{quota.KeyCount: 0, quota.KeyBytes: 0}
		if _, err := c.Create(ctx, statsPath, initial.Bytes(), client.Persistent, client.OpenACL); err != nil {
			return opError(err, statsPath)
		}
		set, err := readQuota(ctx, c, limitsPath)
		if err != nil {
			return opError(err, limitsPath)
		}
		usage, err := readQuota(ctx, c, statsPath)
		if err != nil {
			return opError(err, statsPath)
		}
		warnQuota(s, set, usage)
		return nil
	}
	set, err := readQuota(ctx, c, limitsPath)
	if err != nil {
		return opError(err, limitsPath)
	}
	for k, v := range limits {
		if v > -1 {
			set[k] = v
		}
	}
	usage, err := readQuota(ctx, c, statsPath)
	if err != nil {
		return opError(err, statsPath)
	}
	warnQuota(s, set, usage)
	if _, err := c.Set(ctx, limitsPath, set.Bytes(), -1); err != nil {
		return opError(err, limitsPath)
	}
	return nil
}

// createIfMissing creates p with data unless it exists (or appears
// meanwhile).
func createIfMissing(ctx context.Context, c *client.Conn, p string, data []byte) error {
	_, ok, err := c.Exists(ctx, p)
	if err != nil {
		return opError(err, p)
	}
	if ok {
		return nil
	}
	if _, err := c.Create(ctx, p, data, client.Persistent, client.OpenACL); err != nil && !errors.Is(err, client.ErrNodeExists) {
		return opError(err, p)
	}
	return nil
}

// readQuota reads and parses the quota text of the node at p. A failed
// read gives the client's error as it is.
func readQuota(ctx context.Context, c *client.Conn, p string) (quota.Stats, error) {
	data, _, err := c.Get(ctx, p)
	if err != nil {
		return nil, err
	}
	st, err := quota.Parse(data)
	if err != nil {
		return nil, errQuotaText(p, err)
	}
	return st, nil
}

// warnQuota prints zkCli.sh's warnings for limits already below usage.
func warnQuota(s *Shell, set, usage quota.Stats) {
	below := func(limit, have int64) bool { return limit > -1 && limit < have }
	if n := usage.Get(quota.KeyCount); below(set.Get(quota.KeyCount), n) || below(set.Get(quota.KeyCountHardLimit), n) {
		fmt.Fprintf(s.out(), "[Warning]: the count quota you create is less than the existing count:%d\n", n)
	}
	if n := usage.Get(quota.KeyBytes); below(set.Get(quota.KeyBytes), n) || below(set.Get(quota.KeyByteHardLimit), n) {
		fmt.Fprintf(s.out(), "[Warning]: the bytes quota you create is less than the existing bytes:%d\n", n)
	}
}

// checkChildQuota refuses a quota on p when a path below it has one,
// walking /zookeeper/quota<p> as ZKUtil.visitSubTreeDFS does (a node's
// children are all checked before any is descended into), so that the
// same child is named.
func checkChildQuota(ctx context.Context, c *client.Conn, p string) error {
	root := quota.Path + p
	if err := validatePath(root, false); err != nil {
		return err
	}
	if _, _, err := c.Get(ctx, root); errors.Is(err, client.ErrNoNode) {
		return nil
	} else if err != nil {
		return opError(err, root)
	}
	check := func(qp string) error {
		kids, _, err := c.Children(ctx, qp)
		if err != nil {
			return nil // zkCli.sh skips a node it cannot list
		}
		for _, k := range kids {
			if qp != root && k == quota.LimitsNode {
				return fmt.Errorf("%s has a child %s which has a quota", p, qp[len(quota.Path):])
			}
		}
		return nil
	}
	var walk func(qp string) error
	walk = func(qp string) error {
		kids, _, err := c.Children(ctx, qp)
		if errors.Is(err, client.ErrNoNode) {
			return nil
		} else if err != nil {
			return opError(err, qp)
		}
		sort.Strings(kids)
		for _, k := range kids {
			if err := check(join(qp, k)); err != nil {
				return err
			}
		}
		for _, k := range kids {
			if err := walk(join(qp, k)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check(root); err != nil {
		return err
	}
	return walk(root)
}

// checkParentQuota refuses a quota on p when an ancestor has one; like
// zkCli.sh it stops at the first ancestor with no quota node or with no
// children under it.
func checkParentQuota(ctx context.Context, c *client.Conn, p string) error {
	parts := strings.Split(p, "/")
	qp := quota.Path
	for i := 1; i < len(parts)-1; i++ {
		qp += "/" + parts[i]
		kids, _, err := c.Children(ctx, qp)
		if errors.Is(err, client.ErrNoNode) {
			return nil
		} else if err != nil {
			return opError(err, qp)
		}
		if len(kids) == 0 {
			return nil
		}
		for _, k := range kids {
			if k == quota.LimitsNode {
				return fmt.Errorf("%s has a parent %s which has a quota", p, qp[len(quota.Path):])
			}
		}
	}
	return nil
}

func runListQuota(ctx context.Context, s *Shell, inv *invocation) error {
	p := inv.args[0]
	limitsPath, statsPath := quota.LimitsPath(p), quota.StatsPath(p)
	fmt.Fprintln(s.errw(), "absolute path is "+limitsPath)
	if err := validatePath(limitsPath, false); err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	var out [2]quota.Stats
	for i, q := range []string{limitsPath, statsPath} {
		st, err := readQuota(octx, s.Conn(), q)
		if errors.Is(err, client.ErrNoNode) {
			fmt.Fprintln(s.errw(), "quota for "+p+" does not exist.")
			return nil
		}
		if err != nil {
			return opError(err, q)
		}
		out[i] = st
	}
	_, err := fmt.Fprintf(s.out(), "Output quota for %s %s\nOutput stat for %s %s\n", p, out[0], p, out[1])
	return err
}

func runDelQuota(ctx context.Context, s *Shell, inv *invocation) error {
	p := inv.args[0]
	parentPath, limitsPath := quota.Path+p, quota.LimitsPath(p)
	if err := validatePath(limitsPath, false); err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	err := delQuota(octx, s, s.Conn(), inv, p, parentPath, limitsPath)
	if errors.Is(err, client.ErrNoNode) {
		fmt.Fprintln(s.errw(), "quota for "+p+" does not exist.")
		return nil
	}
	return err
}

// delQuota is DelQuotaCommand.delQuota. A NoNode error (a quota node
// removed meanwhile) comes back unwrapped for runDelQuota to report.
func delQuota(ctx context.Context, s *Shell, c *client.Conn, inv *invocation, p, parentPath, limitsPath string) error {
	_, ok, err := c.Exists(ctx, limitsPath)
	if err != nil {
		return opError(err, limitsPath)
	}
	if !ok {
		_, err := fmt.Fprintln(s.out(), "Quota does not exist for "+p)
		return err
	}
	data, _, err := c.Get(ctx, limitsPath)
	if err != nil {
		return keepNoNode(err, limitsPath)
	}
	flagged := false
	for _, l := range quotaLimits {
		flagged = flagged || inv.has(l.flag)
	}
	if flagged {
		// zkCli.sh parses the limits first whatever the flags (and stops
		// on text it cannot read); warden cli needs them only here, so
		// that delquota without flags removes any quota.
		set, err := quota.Parse(data)
		if err != nil {
			return errQuotaText(limitsPath, err)
		}
		for _, l := range quotaLimits {
			if inv.has(l.flag) {
				set[l.key] = -1
			}
		}
		if _, err := c.Set(ctx, limitsPath, set.Bytes(), -1); err != nil {
			return keepNoNode(err, limitsPath)
		}
		return nil
	}
	kids, _, err := c.Children(ctx, parentPath)
	if err != nil {
		return keepNoNode(err, parentPath)
	}
	for _, k := range kids {
		if err := c.Delete(ctx, parentPath+"/"+k, -1); err != nil {
			return keepNoNode(err, parentPath+"/"+k)
		}
	}
	// Remove the quota path's nodes that are left empty, bottom up.
	for q := parentPath; q != quota.Path; q = q[:strings.LastIndexByte(q, '/')] {
		kids, _, err := c.Children(ctx, q)
		if err != nil {
			return keepNoNode(err, q)
		}
		if len(kids) > 0 {
			break
		}
		if err := c.Delete(ctx, q, -1); err != nil {
			return keepNoNode(err, q)
		}
	}
	return nil
}

// keepNoNode is opError for path, except that NoNode stays as it is.
func keepNoNode(err error, path string) error {
	if errors.Is(err, client.ErrNoNode) {
		return err
	}
	return opError(err, path)
}
