package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/recipe"
)

// registerExtra adds the commands zkCli.sh does not have.
func registerExtra() {
	register(
		&command{name: "tree", usage: "[-d depth] [path]", values: []string{"d"}, json: true, help: "show a subtree with data sizes", run: runTree},
		&command{name: "watch", usage: "[-R] [-n count] path", bools: "R", values: []string{"n"}, minArgs: 1, json: true, help: "stream the events of a path (-R: and its subtree)", run: runWatch},
		&command{name: "lock", usage: "path -- command [args]", minArgs: 1, command: true, help: "run a command while holding a lock", run: runLock},
		&command{name: "elect", usage: "[-id id] path [-- command [args]]", values: []string{"id"}, minArgs: 1, command: true, help: "run for leader; run a command while leading", run: runElect},
		&command{name: "export", usage: "[-o file] path", values: []string{"o"}, minArgs: 1, help: "write a subtree as JSON", run: runExport},
		&command{name: "import", usage: "file [path]", minArgs: 1, help: "create a subtree from export's JSON", run: runImport},
	)
}

// treeNode is one node of tree --json and of export/import.
type treeNode struct {
	Name string `json:"name"`
	jsonData
	Size      int32       `json:"size"`
	Ephemeral bool        `json:"ephemeral,omitempty"`
	ACL       []jsonACL   `json:"acl,omitempty"`
	Children  []*treeNode `json:"children,omitempty"`
}

// readTree reads the subtree at p down to depth levels (<0: all). With
// full it also reads data and ACLs; ephemeral nodes are skipped when
// skipEphemeral.
func readTree(ctx context.Context, c *client.Conn, p string, depth int, full, skipEphemeral bool) (*treeNode, error) {
	var n treeNode
	n.Name = p
	data, st, err := c.Get(ctx, p)
	if err != nil {
		return nil, err
	}
	n.Size, n.Ephemeral = st.DataLength, st.EphemeralOwner != 0 && st.EphemeralOwner>>56 == 0
	if full {
		n.jsonData = encodeData(data)
		acl, _, err := c.GetACL(ctx, p)
		if err != nil {
			return nil, err
		}
		n.ACL = aclJSON(acl)
	}
	if depth == 0 {
		return &n, nil
	}
	kids, _, err := c.Children(ctx, p)
	if err != nil {
		return nil, err
	}
	sort.Strings(kids)
	for _, k := range kids {
		cp := join(p, k)
		if p == "/" && k == "zookeeper" && full {
			continue // the server's own nodes are not exported
		}
		child, err := readTree(ctx, c, cp, depth-1, full, skipEphemeral)
		if errors.Is(err, client.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if skipEphemeral && child.Ephemeral {
			continue
		}
		child.Name = k
		n.Children = append(n.Children, child)
	}
	return &n, nil
}

func runTree(ctx context.Context, s *Shell, inv *invocation) error {
	p := "/"
	if len(inv.args) > 0 {
		p = inv.args[0]
	}
	if err := validatePath(p, false); err != nil {
		return err
	}
	depth := -1
	if v, ok := inv.flags["d"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errors.New("-d argument must be a non-negative int value")
		}
		depth = n
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	root, err := readTree(octx, s.Conn(), p, depth, false, false)
	if err != nil {
		return opError(err, p)
	}
	if inv.json {
		return writeJSON(s.out(), root)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s\n", s.paint(root.Name), sizeSuffix(root))
	drawTree(&b, s, root.Children, "")
	_, err = fmt.Fprint(s.out(), b.String())
	return err
}

func sizeSuffix(n *treeNode) string {
	s := fmt.Sprintf(" (%d B)", n.Size)
	if n.Ephemeral {
		s += " [ephemeral]"
	}
	return s
}

func drawTree(b *strings.Builder, s *Shell, nodes []*treeNode, indent string) {
	for i, n := range nodes {
		branch, next := "├── ", "│   "
		if i == len(nodes)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintf(b, "%s%s%s%s\n", indent, branch, s.paint(n.Name), sizeSuffix(n))
		drawTree(b, s, n.Children, indent+next)
	}
}

// paint colours a node name when colours are on.
func (s *Shell) paint(name string) string {
	if !s.cfg.Color {
		return name
	}
	return "\x1b[34m" + name + "\x1b[0m"
}

func runWatch(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	limit := -1
	if v, ok := inv.flags["n"]; ok {
		if limit, err = strconv.Atoi(v); err != nil || limit <= 0 {
			return errors.New("-n argument must be a positive int value")
		}
	}
	octx, cancel := s.opContext(ctx)
	w, err := s.Conn().AddWatch(octx, p, inv.has("R"))
	cancel()
	if err != nil {
		return opError(err, p)
	}
	defer func() {
		rctx, cancel := s.opContext(context.WithoutCancel(ctx))
		defer cancel()
		w.Remove(rctx)
	}()
	fmt.Fprintf(s.errw(), "watching %s (Ctrl-C to stop)\n", p)
	for seen := 0; limit < 0 || seen < limit; seen++ {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events():
			if !ok || ev.Err != nil {
				return errors.New("watch ended: the session closed")
			}
			if inv.json {
				writeJSON(s.out(), map[string]string{"type": eventTypeName(ev.Type), "path": ev.Path})
				continue
			}
			fmt.Fprintf(s.out(), "%s %s\n", eventTypeName(ev.Type), ev.Path)
		}
	}
	return nil
}

// runCommand runs argv with the shell's output; its exit status becomes
// the command's.
func runCommand(ctx context.Context, s *Shell, argv []string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = os.Stdin
	cmd.Stdout = s.out()
	cmd.Stderr = s.errw()
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &ExitError{Code: ee.ExitCode(), Msg: fmt.Sprintf("%s: %v", argv[0], err)}
	}
	return err
}

func runLock(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	if len(inv.rest) == 0 {
		return errors.New("lock " + commands["lock"].usage)
	}
	l := recipe.NewLock(s.Conn(), p)
	lease, err := l.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("lock %s: %w", p, err)
	}
	defer func() {
		rctx, cancel := s.opContext(context.WithoutCancel(ctx))
		defer cancel()
		l.Release(rctx)
	}()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-l.Lost():
			fmt.Fprintf(s.errw(), "lock %s lost; stopping %s\n", p, inv.rest[0])
			cancel()
		case <-rctx.Done():
		}
	}()
	fmt.Fprintf(s.errw(), "lock %s held (%s, token %d)\n", p, lease.Path, lease.Token)
	return runCommand(rctx, s, inv.rest)
}

func runElect(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	id, ok := inv.flags["id"]
	if !ok {
		host, _ := os.Hostname()
		id = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	latch := recipe.NewLeaderLatch(s.Conn(), p, id)
	if err := latch.Start(ctx); err != nil {
		return fmt.Errorf("elect %s: %w", p, err)
	}
	defer func() {
		cctx, cancel := s.opContext(context.WithoutCancel(ctx))
		defer cancel()
		latch.Close(cctx)
	}()
	fmt.Fprintf(s.errw(), "elect %s: waiting as %s (%s)\n", p, id, latch.Node())
	lead, err := latch.Await(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("elect %s: %w", p, err)
	}
	fmt.Fprintf(s.out(), "leader %s (token %d)\n", lead.Node, lead.Token)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-lead.Lost:
			fmt.Fprintf(s.errw(), "elect %s: leadership lost\n", p)
			cancel()
		case <-rctx.Done():
		}
	}()
	if len(inv.rest) == 0 {
		<-rctx.Done() // lead until interrupted or lost
		return nil
	}
	return runCommand(rctx, s, inv.rest)
}

// exportFile is the JSON document of export and import.
type exportFile struct {
	// Format names the document ("warden-export/1").
	Format string    `json:"format"`
	Root   *treeNode `json:"root"`
}

const exportFormat = "warden-export/1"

func runExport(ctx context.Context, s *Shell, inv *invocation) error {
	p, err := pathArg(inv, 0)
	if err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	root, err := readTree(octx, s.Conn(), p, -1, true, true)
	if err != nil {
		return opError(err, p)
	}
	b, err := json.MarshalIndent(exportFile{Format: exportFormat, Root: root}, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if f, ok := inv.flags["o"]; ok {
		return os.WriteFile(f, b, 0o644)
	}
	_, err = s.out().Write(b)
	return err
}

func runImport(ctx context.Context, s *Shell, inv *invocation) error {
	var r io.Reader = os.Stdin
	if inv.args[0] != "-" {
		f, err := os.Open(inv.args[0])
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	var doc exportFile
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return fmt.Errorf("import %s: %w", inv.args[0], err)
	}
	if doc.Format != exportFormat || doc.Root == nil {
		return fmt.Errorf("import %s: not a %s document", inv.args[0], exportFormat)
	}
	p := doc.Root.Name
	if len(inv.args) > 1 {
		p = inv.args[1]
	}
	if err := validatePath(p, false); err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	n, err := importTree(octx, s.Conn(), p, doc.Root)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.out(), "Imported %d nodes under %s\n", n, p)
	return err
}

// importTree creates p from n (setting the data of a node that exists)
// and then its children; it returns the number of nodes written.
func importTree(ctx context.Context, c *client.Conn, p string, n *treeNode) (int, error) {
	data, err := n.decode()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	acl := client.OpenACL
	if len(n.ACL) > 0 {
		acl = aclFromJSON(n.ACL)
	}
	count := 0
	if p != "/" {
		_, err = c.Create(ctx, p, data, client.Persistent, acl)
		if errors.Is(err, client.ErrNodeExists) {
			_, err = c.Set(ctx, p, data, -1)
		}
		if err != nil {
			return 0, errors.New(errorText(err, p))
		}
		count++
	}
	for _, k := range n.Children {
		if k == nil {
			return count, fmt.Errorf("%s: a child is null, not a node", p)
		}
		m, err := importTree(ctx, c, join(p, k.Name), k)
		count += m
		if err != nil {
			return count, err
		}
	}
	return count, nil
}
