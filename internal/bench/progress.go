package bench

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"
)

// IsTerminal reports whether f is a terminal (a character device), where
// a progress line is welcome.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startProgress rewrites one status line on w five times a second until
// the returned stop is called. A nil w shows nothing.
func startProgress(w io.Writer, name string, done *atomic.Int64, start time.Time) (stop func()) {
	if w == nil {
		return func() {}
	}
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				el := time.Since(start).Seconds()
				n := done.Load()
				fmt.Fprintf(w, "\r\033[K%-24s %10d ops %10.0f ops/s %6.1fs", name, n, float64(n)/el, el)
			}
		}
	}()
	return func() { close(quit); <-exited }
}
