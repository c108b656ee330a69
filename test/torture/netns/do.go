package netns

import (
	"fmt"
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"runtime"
)

// Do runs f on an OS thread that has entered member i's network
// namespace, and returns f's error. Sockets f opens itself (net.Listen,
// net.Dial) belong to that namespace and keep it after Do returns: a
// listener opened in Do accepts in the member's namespace from any
// goroutine. Goroutines f starts do not run in the namespace. f must not
// block forever. The thread is discarded when f returns, never reused in
// the host namespace. It panics if i is out of range.
func (n *Net) Do(i int, f func() error) error {
	return inNamespace(n.members[i], f)
}

// inNamespace runs f on a fresh OS thread in namespace ns.
func inNamespace(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the goroutine exits locked, so the runtime
		// terminates the thread instead of returning it to the pool in the
		// wrong namespace.
		runtime.LockOSThread()
		fd, err := os.Open(filepath.Join(netnsDir, ns))
		if err != nil {
			errc <- fmt.Errorf("netns: %w", err)
			return
		}
		err = unix.Setns(int(fd.Fd()), unix.CLONE_NEWNET)
		fd.Close()
		if err != nil {
			errc <- fmt.Errorf("netns: setns %s: %w", ns, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}
