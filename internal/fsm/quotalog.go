package fsm

import (
	"log/slog"

	"github.com/wardenzk/warden/internal/tree"
)

// quotaLogInterval is RateLogger's default interval, in milliseconds.
const quotaLogInterval = 100

// quotaLog is ZooKeeper's RateLogger for the quota warnings, with the
// entries' times (ms since the epoch, the proposer's clock) for its clock,
// so that every server logs the same lines for the same log:
//
//   - a warning different from the last one is logged at once (after
//     the count of the last one's repeats, if any are pending);
//   - a repeat of the last warning is counted; when it comes 100 ms or
//     more after the last one was logged, the count so far is logged
//     with the message, as a "times" attribute, and counting starts
//     again.
//
// Warden logs ZooKeeper's message text ("Quota exceeded: /app [current
// count=4, hardCountLimit=3]"); ZooKeeper's lines wrap it as
// "Message:<text> Value:null" and "[<n> times] Message: <text>".
type quotaLog struct {
	last  tree.QuotaExceeded
	text  string // last.String(); "" when nothing is pending
	at    int64  // entry time last was logged or its count flushed
	count int    // repeats of last not logged yet
}

func (r *quotaLog) log(l *slog.Logger, q tree.QuotaExceeded, now int64) {
	text := q.String()
	if r.text != "" && text == r.text {
		r.count++
		if now-r.at >= quotaLogInterval {
			r.flush(l)
			r.last, r.text, r.at = q, text, now
		}
		return
	}
	r.flush(l)
	r.last, r.text, r.at = q, text, now
	l.Warn(text, quotaAttrs(q)...)
}

// flush logs the repeats of the last warning, if any, and forgets it.
func (r *quotaLog) flush(l *slog.Logger) {
	if r.text != "" && r.count > 0 {
		l.Warn(r.text, append(quotaAttrs(r.last), "times", r.count)...)
	}
	r.last, r.text, r.count = tree.QuotaExceeded{}, "", 0
}

func quotaAttrs(q tree.QuotaExceeded) []any {
	limit := "soft"
	if q.Hard {
		limit = "hard"
	}
	return []any{"quota_root", q.Root, "limit", limit}
}
