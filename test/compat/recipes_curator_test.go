//go:build compat

package compat

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// curatorScenarios are the scenarios of curator/CuratorCheck.java, run in this order
// against one server. Each uses its own paths, so they share the server.
var curatorScenarios = []string{
	"mutex",           // InterProcessMutex: 4 sessions x 25 locked increments = 100
	"leader",          // LeaderLatch: 3 participants, one leader at a time, handover on close
	"barrier",         // DistributedBarrier and DistributedDoubleBarrier
	"sharedcount",     // SharedCount: concurrent trySetCount increments are exact
	"queue",           // SimpleDistributedQueue and DistributedQueue: exactly-once delivery
	"cache",           // CuratorCache on a subtree, across a connection loss
	"transaction",     // client.transaction().forOperations: success, failure, background
	"protection",      // creatingParentContainersIfNeeded, withProtection() ephemeral sequential
	"persistentwatch", // PersistentWatcher (addWatch), SetWatches2 after reconnect
}

// curatorJars are the /usr/share/java jars Curator 5.4 needs beyond ZooKeeper's.
var curatorJars = []string{"curator-client", "curator-framework", "curator-recipes", "guava"}

// compileCuratorCheck compiles curator/CuratorCheck.java into a temporary directory and
// returns the classpath that runs it.
func compileCuratorCheck(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not installed (scripts/install-test-deps.sh)")
	}
	dir := t.TempDir()
	cp := javaClasspath(curatorJars...)
	ctx, cancel := context.WithTimeout(context.Background(), recipeDeadline)
	defer cancel()
	out, err := exec.CommandContext(ctx, "javac", "-nowarn", "-d", dir, "-cp", cp,
		filepath.Join("curator", "CuratorCheck.java")).CombinedOutput()
	if err != nil {
		t.Fatalf("javac CuratorCheck.java: %v\n%s", err, out)
	}
	return dir + ":" + cp
}

// TestCuratorRecipes runs Apache Curator's recipes against each server. Every scenario's
// transcript must match its golden file (recorded from ZooKeeper) and the other server's;
// CuratorCheck itself exits non-zero when a recipe invariant breaks (a lost increment,
// two leaders, a message delivered twice).
func TestCuratorRecipes(t *testing.T) {
	cp := compileCuratorCheck(t)
	differential(t, nil, func(t *testing.T, s *Server) string {
		var all strings.Builder
		for _, sc := range curatorScenarios {
			t.Run(sc, func(t *testing.T) {
				start := time.Now()
				out := runRecipeProgram(t, "java", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
					"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp, "CuratorCheck", s.Addr, sc)
				all.WriteString(out)
				t.Logf("%s took %v", sc, time.Since(start).Round(time.Millisecond))
				checkGolden(t, s, filepath.Join("curator", "testdata", sc+".txt"), out)
			})
		}
		return all.String()
	})
}
