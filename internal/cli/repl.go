package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/reeflective/readline"
)

// Interactive runs the line editor on the process's terminal until quit,
// Ctrl-D or end of input. historyFile ("" for none) keeps the edited lines
// across runs (Ctrl-R searches it). Watch events are printed above the
// prompt while a line is being typed. Ctrl-C clears the line at the
// prompt, and interrupts a running command (watch, lock, elect).
func (s *Shell) Interactive(historyFile string) error {
	rl := readline.NewShell()
	rl.Prompt.Primary(s.Prompt)
	if historyFile != "" {
		rl.History.AddFromFile("warden", historyFile)
	}
	rl.Completer = func(line []rune, cursor int) readline.Completions {
		cands, path := s.complete(string(line[:cursor]))
		if path {
			return readline.CompleteValues(cands...).NoSpace()
		}
		return readline.CompleteValues(cands...)
	}
	fmt.Fprintln(s.out(), "Welcome to Warden!")
	for {
		s.mu.Lock()
		s.above = func(msg string) { rl.Printf("%s", msg) }
		s.mu.Unlock()
		line, err := rl.Readline()
		s.mu.Lock()
		s.above = nil
		s.mu.Unlock()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, readline.ErrInterrupt):
			continue
		case err != nil:
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		err = s.Exec(ctx, line)
		stop()
		if errors.Is(err, ErrQuit) {
			return nil
		}
	}
}

// completionTimeout bounds the server round trip of a path completion.
const completionTimeout = 2 * time.Second

// complete returns the completions of the last word of before (the line up
// to the cursor): command names for the first word, the command's options
// for a word starting with "-", and znode paths read from the server for a
// word starting with "/". path reports that the candidates are paths.
func (s *Shell) complete(before string) (cands []string, path bool) {
	words := splitLine(before)
	cur := ""
	if len(words) > 0 && !strings.HasSuffix(before, " ") {
		cur = words[len(words)-1]
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		for name := range commands {
			if strings.HasPrefix(name, cur) {
				cands = append(cands, name)
			}
		}
		sort.Strings(cands)
		return cands, false
	}
	cmd, ok := commands[words[0]]
	if !ok {
		return nil, false
	}
	switch {
	case strings.HasPrefix(cur, "-"):
		var opts []string
		for _, b := range cmd.bools {
			opts = append(opts, "-"+string(b))
		}
		for _, v := range cmd.values {
			opts = append(opts, "-"+v)
		}
		if cmd.json {
			opts = append(opts, "--json")
		}
		for _, o := range opts {
			if strings.HasPrefix(o, cur) {
				cands = append(cands, o)
			}
		}
		sort.Strings(cands)
		return cands, false
	case cur == "" || strings.HasPrefix(cur, "/"):
		return s.completePath(cur), true
	}
	return nil, false
}

// completePath lists the znodes whose path starts with prefix.
func (s *Shell) completePath(prefix string) []string {
	c := s.Conn()
	if c == nil {
		return nil
	}
	if prefix == "" {
		prefix = "/"
	}
	dir, base := "/", prefix[1:]
	if i := strings.LastIndexByte(prefix, '/'); i > 0 {
		dir, base = prefix[:i], prefix[i+1:]
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	kids, _, err := c.Children(ctx, dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, k := range kids {
		if strings.HasPrefix(k, base) {
			out = append(out, join(dir, k))
		}
	}
	sort.Strings(out)
	return out
}
