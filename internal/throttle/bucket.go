package throttle

import (
	"fmt"
	"math"
	"time"
)

// BucketConfig configures a Bucket with ZooKeeper's connection throttling
// keys (zoo.cfg names; the system-property spellings in parentheses).
type BucketConfig struct {
	// MaxTokens is the bucket's capacity (connectionMaxTokens,
	// connection_throttle_tokens). 0 turns throttling off. Default 0.
	MaxTokens int
	// FillTime is the refill period in milliseconds
	// (connectionTokenFillTime, connection_throttle_fill_time). Default 1.
	FillTime int
	// FillCount is how many tokens each FillTime adds
	// (connectionTokenFillCount, connection_throttle_fill_count). Default 1.
	FillCount int
	// FreezeTime is how often, in milliseconds, the drop probability is
	// adjusted (connectionFreezeTime, connection_throttle_freeze_time).
	// -1 turns the probabilistic drop off. Default -1.
	FreezeTime int
	// DropIncrease is added to the drop probability at each adjustment
	// that finds the bucket empty (connectionDropIncrease,
	// connection_throttle_drop_increase). Default 0.02.
	DropIncrease float64
	// DropDecrease is taken from it at each adjustment that finds no more
	// than MaxTokens × DecreaseRatio tokens used (connectionDropDecrease,
	// connection_throttle_drop_decrease). Default 0.002.
	DropDecrease float64
	// DecreaseRatio sets that threshold (connectionDecreaseRatio,
	// connection_throttle_decrease_ratio). Default 0.
	DecreaseRatio float64
}

// DefaultBucketConfig returns ZooKeeper's defaults: throttling off.
func DefaultBucketConfig() BucketConfig {
	return BucketConfig{FillTime: 1, FillCount: 1, FreezeTime: -1, DropIncrease: 0.02, DropDecrease: 0.002}
}

// Validate reports settings the bucket cannot run with. A bucket that is
// off (MaxTokens 0) accepts anything.
func (c BucketConfig) Validate() error {
	if c.MaxTokens == 0 {
		return nil
	}
	switch {
	case c.MaxTokens < 0:
		return fmt.Errorf("throttle: connectionMaxTokens=%d: must be 0 (off) or positive", c.MaxTokens)
	case c.FillTime <= 0:
		return fmt.Errorf("throttle: connectionTokenFillTime=%d: must be a positive number of milliseconds", c.FillTime)
	case c.FillCount < 0:
		return fmt.Errorf("throttle: connectionTokenFillCount=%d: must not be negative", c.FillCount)
	case c.FreezeTime < -1:
		return fmt.Errorf("throttle: connectionFreezeTime=%d: must be -1 (off) or a number of milliseconds", c.FreezeTime)
	}
	return nil
}

// Bucket is ZooKeeper's BlueThrottle: a token bucket refilled with
// FillCount tokens every FillTime, from which each new session takes its
// weight in tokens; and, with FreezeTime set, a drop probability that
// every FreezeTime grows by DropIncrease while the bucket is empty and
// shrinks by DropDecrease while it is nearly full, so a sustained storm
// is shed at random before it empties the bucket again (the BLUE queue
// management algorithm).
//
// A Bucket is not safe for concurrent use; the caller serialises it. Time
// and randomness are inputs: Check takes the current time, and the
// Bucket's Rand returns the uniform draws in [0, 1).
type Bucket struct {
	cfg BucketConfig
	// Rand draws the probabilistic drop; nil never drops.
	Rand func() float64

	// Invariant: 0 <= tokens <= cfg.MaxTokens (tokens may be briefly
	// negative only through SetMaxTokens, as in ZooKeeper).
	tokens     int64
	lastFill   time.Time
	lastFreeze time.Time
	drop       float64
}

// NewBucket returns a full bucket whose clocks start at now.
func NewBucket(cfg BucketConfig, now time.Time, rand func() float64) *Bucket {
	return &Bucket{cfg: cfg, Rand: rand, tokens: int64(cfg.MaxTokens), lastFill: now, lastFreeze: now}
}

// Enabled reports whether the bucket throttles at all (MaxTokens > 0).
func (b *Bucket) Enabled() bool { return b.cfg.MaxTokens > 0 }

// Check takes need tokens at time now and reports whether the session may
// go on. As in ZooKeeper, the bucket is first refilled for the whole
// FillTime periods elapsed since the last refill (what is left of the
// current one is lost), then the drop probability is adjusted and drawn,
// then the tokens are taken; a refused session takes none.
func (b *Bucket) Check(now time.Time, need int) bool {
	if b.cfg.MaxTokens == 0 {
		return true
	}
	if diff := now.Sub(b.lastFill).Milliseconds(); diff > int64(b.cfg.FillTime) {
		refill := diff * int64(b.cfg.FillCount) / int64(b.cfg.FillTime)
		b.tokens = min(b.tokens+refill, int64(b.cfg.MaxTokens))
		if b.tokens < 0 { // overflow of insane settings: ZooKeeper refills
			b.tokens = int64(b.cfg.MaxTokens)
		}
		b.lastFill = now
	}
	if b.cfg.FreezeTime != -1 && !b.checkBlue(now) {
		return false
	}
	if b.tokens < int64(need) {
		return false
	}
	b.tokens -= int64(need)
	return true
}

// checkBlue adjusts the drop probability once per FreezeTime and draws.
func (b *Bucket) checkBlue(now time.Time) bool {
	used := int64(b.cfg.MaxTokens) - b.tokens
	threshold := int64(math.Round(float64(b.cfg.MaxTokens) * b.cfg.DecreaseRatio))
	if now.Sub(b.lastFreeze).Milliseconds() > int64(b.cfg.FreezeTime) {
		switch {
		case used == int64(b.cfg.MaxTokens) && b.drop < 1:
			b.drop = min(b.drop+b.cfg.DropIncrease, 1)
		case used <= threshold && b.drop > 0:
			b.drop = max(b.drop-b.cfg.DropDecrease, 0)
		}
		b.lastFreeze = now
	}
	if b.Rand == nil {
		return true
	}
	return !(b.Rand() < b.drop)
}

// DropChance returns the current drop probability (mntr's
// connection_drop_probability).
func (b *Bucket) DropChance() float64 { return b.drop }

// Deficit returns how many tokens are missing from a full bucket (the
// connection_token_deficit summary records it after each admission).
func (b *Bucket) Deficit() int { return int(int64(b.cfg.MaxTokens) - b.tokens) }

// Weights are the tokens one session establishment takes when
// connection_throttle_weight_enabled is on; otherwise each takes one.
type Weights struct {
	// Enabled is connection_throttle_weight_enabled (default false).
	Enabled bool
	// Global is what creating a (global) session costs
	// (connection_throttle_global_session_weight; default 3).
	Global int
	// Local is what creating a local session costs
	// (connection_throttle_local_session_weight; default 1).
	Local int
	// Renew is what re-attaching an existing session costs
	// (connection_throttle_renew_session_weight; default 2).
	Renew int
}

// DefaultWeights returns ZooKeeper's defaults: off, 3, 1, 2.
func DefaultWeights() Weights { return Weights{Global: 3, Local: 1, Renew: 2} }

// Effective returns the weights ZooKeeper would use for w: a weight that
// is not positive takes its default, and the global and renew weights are
// raised to the local one when below it. Each correction is described in
// fixes, in ZooKeeper's words, for the log.
func (w Weights) Effective() (eff Weights, fixes []string) {
	eff = w
	local := w.Local
	if w.Global <= 0 {
		fixes = append(fixes, fmt.Sprintf("Invalid global session weight %d. It should be larger than 0", w.Global))
		eff.Global = 3
	} else if w.Global < local {
		fixes = append(fixes, fmt.Sprintf("The global session weight %d is less than the local session weight %d. Use the local session weight.", w.Global, local))
		eff.Global = local
	}
	if w.Local <= 0 {
		fixes = append(fixes, fmt.Sprintf("Invalid local session weight %d. It should be larger than 0", w.Local))
		eff.Local = 1
	}
	if w.Renew <= 0 {
		fixes = append(fixes, fmt.Sprintf("Invalid renew session weight %d. It should be larger than 0", w.Renew))
		eff.Renew = 2
	} else if w.Renew < local {
		fixes = append(fixes, fmt.Sprintf("The renew session weight %d is less than the local session weight %d. Use the local session weight.", w.Renew, local))
		eff.Renew = local
	}
	return eff, fixes
}

// Scale returns cfg as ZooKeeper sizes it for w: with weights enabled,
// the configured token counts are taken to be global sessions, so the
// capacity and the refill are multiplied by the global weight.
func (w Weights) Scale(cfg BucketConfig) BucketConfig {
	if w.Enabled {
		cfg.MaxTokens *= w.Global
		cfg.FillCount *= w.Global
	}
	return cfg
}

// Need returns the tokens a session establishment takes: one without
// weights; with them, Renew to re-attach a session (sessionID != 0), and
// Local or Global to create one, as localSessions says.
func (w Weights) Need(sessionID int64, localSessions bool) int {
	switch {
	case !w.Enabled:
		return 1
	case sessionID != 0:
		return w.Renew
	case localSessions:
		return w.Local
	default:
		return w.Global
	}
}
