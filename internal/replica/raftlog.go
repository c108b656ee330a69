package replica

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
)

// exit ends the process; a variable so tests of Fatal paths can replace it.
var exit = os.Exit

// isDiskFull reports whether err is a full disk, which the node waits out
// instead of stopping.
func isDiskFull(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// raftLogger routes raft's logs to slog. Raft is chatty about routine
// elections at Info, so those become Debug.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any) { r.l.Debug(fmt.Sprint(v...), "component", "raft") }
func (r raftLogger) Debugf(format string, v ...any) {
	r.l.Debug(fmt.Sprintf(format, v...), "component", "raft")
}
func (r raftLogger) Info(v ...any) { r.l.Debug(fmt.Sprint(v...), "component", "raft") }
func (r raftLogger) Infof(format string, v ...any) {
	r.l.Debug(fmt.Sprintf(format, v...), "component", "raft")
}
func (r raftLogger) Warning(v ...any) { r.l.Warn(fmt.Sprint(v...), "component", "raft") }
func (r raftLogger) Warningf(format string, v ...any) {
	r.l.Warn(fmt.Sprintf(format, v...), "component", "raft")
}
func (r raftLogger) Error(v ...any) { r.l.Error(fmt.Sprint(v...), "component", "raft") }
func (r raftLogger) Errorf(format string, v ...any) {
	r.l.Error(fmt.Sprintf(format, v...), "component", "raft")
}
func (r raftLogger) Fatal(v ...any)                 { r.fatal(fmt.Sprint(v...)) }
func (r raftLogger) Fatalf(format string, v ...any) { r.fatal(fmt.Sprintf(format, v...)) }
func (r raftLogger) Panic(v ...any)                 { panic(fmt.Sprint(v...)) }
func (r raftLogger) Panicf(format string, v ...any) { panic(fmt.Sprintf(format, v...)) }

func (r raftLogger) fatal(msg string) {
	r.l.Error(msg, "component", "raft")
	exit(2)
}
