package fsm

import "fmt"

// SessionID identifies a session across the ensemble. Its layout is
// ZooKeeper's: the creating server's id in the top byte, then its start
// time and a counter.
type SessionID int64

func (id SessionID) String() string { return fmt.Sprintf("0x%x", uint64(id)) }

// Zxid is a transaction id: epoch << 32 | counter (DESIGN.md §5),
// identical on every member for the same write.
type Zxid int64

func (z Zxid) String() string { return fmt.Sprintf("0x%x", int64(z)) }
