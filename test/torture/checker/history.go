package checker

// Outcome is what a client learnt about one of its operations.
type Outcome int

const (
	// OK: the server acknowledged the operation; it took effect.
	OK Outcome = iota
	// Failed: the operation definitely did not take effect (e.g.
	// BadVersion, NoNode).
	Failed
	// Unknown: the operation may or may not have taken effect
	// (connection loss, timeout, session expired while it was pending).
	Unknown
)

// String returns "ok", "fail" or "unknown".
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "fail"
	default:
		return "unknown"
	}
}

// Span is when an operation was invoked and when its client learnt its
// outcome, in nanoseconds since the run began (one monotonic clock for
// every client of a run). For an Unknown operation Return is when the
// client gave up; the checkers treat it as open-ended.
type Span struct {
	Call, Return int64
}

// Result is one checker's verdict on one run.
type Result struct {
	// Workload names the checker ("registers", "set", ...).
	Workload string
	// OK reports that no anomaly was found.
	OK bool
	// Ops counts the operations checked.
	Ops int
	// Anomalies describes each anomaly found, one line each.
	Anomalies []string
	// Key is the first key (register, element, path) an anomaly
	// concerns; empty when OK.
	Key string
	// Visualization is the path of porcupine's HTML rendering of a
	// failing register history; empty otherwise.
	Visualization string
	// Notes says what the reader of a verdict should know that is not an
	// anomaly: counts, checks skipped for want of data, a visualization
	// that could not be written. Notes never make a Result not OK.
	Notes []string
}
