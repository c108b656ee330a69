package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/internal/zkimport"
)

const importZKDoc = `Loads an Apache ZooKeeper data directory as ZooKeeper's start-up would and
writes its state as the first snapshot of a new Warden data directory, for
the membership -config gives (standalone without it).
`

// importZKFlags is `warden import-zk [-zk-datalogdir dir] [-config zoo.cfg] <zookeeper dataDir> <warden dataDir>`.
func importZKFlags(fs *flag.FlagSet) func(args []string) error {
	logDir := fs.String("zk-datalogdir", "", "ZooKeeper's dataLogDir, when it was set apart from dataDir")
	cfgPath := fs.String("config", "", "the zoo.cfg the Warden server will run with (its server.N lines and myid decide the membership the data is written for; standalone without it)")
	return func(args []string) error {
		if len(args) != 2 {
			return badUsage("want 2 arguments (ZooKeeper's dataDir and a new Warden dataDir), got %d", len(args))
		}
		return runImportZK(args[0], args[1], *logDir, *cfgPath)
	}
}

// runImportZK loads a ZooKeeper data dir as ZooKeeper's start-up would and
// writes its state as the first snapshot of a new Warden data dir, for the
// membership zoo.cfg gives (standalone without it).
func runImportZK(src, dst, logDir, cfgPath string) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	self, members, err := membershipOf(cfgPath)
	if err != nil {
		return err
	}

	snapDir := filepath.Join(dst, "version-2")
	if ents, err := os.ReadDir(snapDir); err == nil && len(ents) > 0 {
		return fmt.Errorf("import-zk: %s is not empty: import into a new Warden data dir", snapDir)
	}
	db, skipped, err := zkimport.Load(zkimport.Dirs{Data: src, Log: logDir})
	for _, e := range skipped {
		log.Warn("skipped a damaged ZooKeeper snapshot (an older one is used)", "err", e)
	}
	if err != nil {
		return err
	}
	t, err := db.Tree(tree.Options{})
	if err != nil {
		return fmt.Errorf("import-zk: %w", err)
	}
	epoch, counter := db.ZxidState()
	f := fsm.NewFromState(fsm.Options{}, t, db.FSMSessions(), epoch, counter, 1)
	// The state a fresh member of that membership starts from: index 1,
	// term 1, with the imported state in place of an empty tree.
	meta := node.Bootstrap(self, members)
	if err := storage.NewSnapshotter(storage.OSFS, snapDir, storage.MinSnapRetain, log).Save(meta, f.WriteSnapshot); err != nil {
		return fmt.Errorf("import-zk: writing the snapshot: %w", err)
	}
	fmt.Printf("imported %s (snapshot %s, %d logs, %d transactions replayed): %d znodes, %d sessions, zxid %#x\n",
		src, filepath.Base(db.Snapshot), len(db.Logs), db.Replayed, len(db.Nodes), len(db.Sessions), db.LastZxid)
	return nil
}
