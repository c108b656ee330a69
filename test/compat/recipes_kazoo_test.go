//go:build compat

package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// debianPython is the interpreter that sees Debian's python3-kazoo (the python3 first on
// PATH may be a separate build without it).
const debianPython = "/usr/bin/python3"

// kazooScenarios are the scenarios of kazoo_recipes/recipes.py, run in this order
// against one server. Each uses its own paths, so they share the server.
var kazooScenarios = []string{
	"lock",          // Lock: 4 sessions x 25 locked increments = 100; timeouts; contenders
	"election",      // Election: one leader at a time, in contender order
	"barrier",       // Barrier: wait blocks while set, releases all waiters on remove
	"doublebarrier", // DoubleBarrier: enter after all arrive, leave after all leave
	"counter",       // Counter: concurrent increments exact; float; Curator-compatible format
	"queue",         // Queue: FIFO, priorities, exactly-once to concurrent consumers
	"lockingqueue",  // LockingQueue: release redelivers, consume is exactly-once
	"party",         // Party and ShallowParty: join, leave, session end
}

// TestKazooRecipes runs kazoo's recipes against each server. Every scenario's transcript
// must match its golden file (recorded from ZooKeeper) and the other server's;
// recipes.py itself exits non-zero when a recipe invariant breaks.
func TestKazooRecipes(t *testing.T) {
	if _, err := os.Stat(debianPython); err != nil {
		t.Skipf("%s not installed", debianPython)
	}
	script := filepath.Join("kazoo_recipes", "recipes.py")
	differential(t, nil, func(t *testing.T, s *Server) string {
		var all strings.Builder
		for _, sc := range kazooScenarios {
			t.Run(sc, func(t *testing.T) {
				start := time.Now()
				out := runRecipeProgram(t, debianPython, script, s.Addr, sc)
				all.WriteString(out)
				t.Logf("%s took %v", sc, time.Since(start).Round(time.Millisecond))
				checkGolden(t, s, filepath.Join("kazoo_recipes", "testdata", sc+".txt"), out)
			})
		}
		return all.String()
	})
}
