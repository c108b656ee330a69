package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/internal/throttle"
)

// Limits are ZooKeeper's admission-control settings beyond
// globalOutstandingLimit, maxClientCnxns and maxCnxns: the connection
// throttler (3.6+), the request throttler (3.6+) and large-request
// throttling (3.6+). docs/operations.md ("Limits and throttling") says what
// Warden does with each.
//
// Each key is read under its zoo.cfg name and under the name of the Java
// system property ZooKeeper actually reads (connectionMaxTokens and
// connection_throttle_tokens, with or without "zookeeper."); when both are
// given, the later line wins. (ZooKeeper itself honours only the property
// spelling in zoo.cfg, as it exports zoo.cfg keys as "zookeeper.<key>".)
type Limits struct {
	// Connection is the token bucket new sessions draw from
	// (connectionMaxTokens, connectionTokenFillTime,
	// connectionTokenFillCount, connectionFreezeTime,
	// connectionDropIncrease, connectionDropDecrease,
	// connectionDecreaseRatio). Off by default (MaxTokens 0).
	Connection throttle.BucketConfig
	// ConnectionWeights are connection_throttle_weight_enabled (default
	// false) and connection_throttle_{global,local,renew}_session_weight
	// (3, 1, 2).
	ConnectionWeights throttle.Weights

	// RequestThrottleMaxRequests is the number of requests in processing
	// above which new ones wait (requestThrottleLimit,
	// request_throttle_max_requests; default 0 = off).
	RequestThrottleMaxRequests int
	// RequestThrottleStallTime is, in milliseconds, how long a waiting
	// request sleeps before it checks again (requestThrottleStallTime,
	// request_throttle_stall_time; default 100).
	RequestThrottleStallTime int
	// RequestThrottleDropStale drops, rather than processes, a waiting
	// request that became stale (requestThrottleDropStale,
	// request_throttle_drop_stale; default true).
	RequestThrottleDropStale bool
	// RequestStaleConnectionCheck makes a request of a closed connection
	// stale (request_stale_connection_check; default true).
	RequestStaleConnectionCheck bool
	// RequestStaleLatencyCheck makes a request stale once it has waited
	// longer than its session timeout (request_stale_latency_check;
	// default false).
	RequestStaleLatencyCheck bool
	// ThrottledOpWaitTime, in milliseconds, answers a request that waited
	// longer than this in the request throttler with THROTTLEDOP (-127)
	// instead of processing it (throttled_op_wait_time; default 0 = off).
	ThrottledOpWaitTime int

	// LargeRequestThreshold is the size in bytes above which a request is
	// large (largeRequestThreshold; default -1 = none is).
	LargeRequestThreshold int
	// LargeRequestMaxBytes bounds the bytes of large requests in flight;
	// a large request past it closes its connection
	// (largeRequestMaxBytes; default 100 MiB).
	LargeRequestMaxBytes int
}

// defaultLimits returns ZooKeeper's defaults: every throttle off.
func defaultLimits() Limits {
	return Limits{
		Connection:                  throttle.DefaultBucketConfig(),
		ConnectionWeights:           throttle.DefaultWeights(),
		RequestThrottleStallTime:    100,
		RequestThrottleDropStale:    true,
		RequestStaleConnectionCheck: true,
		LargeRequestThreshold:       -1,
		LargeRequestMaxBytes:        100 << 20,
	}
}

// validate reports settings that cannot run.
func (l *Limits) validate() error {
	if err := l.Connection.Validate(); err != nil {
		return fmt.Errorf("config: %w: %w", err, ErrInvalid)
	}
	if l.RequestThrottleMaxRequests > 0 && l.RequestThrottleStallTime <= 0 {
		return fmt.Errorf("config: request_throttle_stall_time=%d must be a positive number of milliseconds: %w",
			l.RequestThrottleStallTime, ErrInvalid)
	}
	return nil
}

// limitKeys are the keys of Limits, both spellings, canonical (without
// "zookeeper.").
var limitKeys = map[string]setter{
	"connectionMaxTokens":        decodeIntKey(func(c *Config) *int { return &c.Limits.Connection.MaxTokens }),
	"connection_throttle_tokens": decodeIntKey(func(c *Config) *int { return &c.Limits.Connection.MaxTokens }),

	"connectionTokenFillTime":       decodeIntKey(func(c *Config) *int { return &c.Limits.Connection.FillTime }),
	"connection_throttle_fill_time": decodeIntKey(func(c *Config) *int { return &c.Limits.Connection.FillTime }),

	"connectionTokenFillCount":       decodeIntKey(func(c *Config) *int { return &c.Limits.Connection.FillCount }),
	"connection_throttle_fill_count": decodeIntKey(func(c *Config) *int { return &c.Limits.Connection.FillCount }),

	"connectionFreezeTime":            decodeIntKey(func(c *Config) *int { return &c.Limits.Connection.FreezeTime }),
	"connection_throttle_freeze_time": decodeIntKey(func(c *Config) *int { return &c.Limits.Connection.FreezeTime }),

	"connectionDropIncrease":            doubleKey(func(c *Config) *float64 { return &c.Limits.Connection.DropIncrease }),
	"connection_throttle_drop_increase": doubleKey(func(c *Config) *float64 { return &c.Limits.Connection.DropIncrease }),

	"connectionDropDecrease":            doubleKey(func(c *Config) *float64 { return &c.Limits.Connection.DropDecrease }),
	"connection_throttle_drop_decrease": doubleKey(func(c *Config) *float64 { return &c.Limits.Connection.DropDecrease }),

	"connectionDecreaseRatio":            doubleKey(func(c *Config) *float64 { return &c.Limits.Connection.DecreaseRatio }),
	"connection_throttle_decrease_ratio": doubleKey(func(c *Config) *float64 { return &c.Limits.Connection.DecreaseRatio }),

	"connection_throttle_weight_enabled":        javaBoolKey(func(c *Config) *bool { return &c.Limits.ConnectionWeights.Enabled }),
	"connection_throttle_global_session_weight": decodeIntKey(func(c *Config) *int { return &c.Limits.ConnectionWeights.Global }),
	"connection_throttle_local_session_weight":  decodeIntKey(func(c *Config) *int { return &c.Limits.ConnectionWeights.Local }),
	"connection_throttle_renew_session_weight":  decodeIntKey(func(c *Config) *int { return &c.Limits.ConnectionWeights.Renew }),

	"requestThrottleLimit":          decodeIntKey(func(c *Config) *int { return &c.Limits.RequestThrottleMaxRequests }),
	"request_throttle_max_requests": decodeIntKey(func(c *Config) *int { return &c.Limits.RequestThrottleMaxRequests }),
	"requestThrottleStallTime":      decodeIntKey(func(c *Config) *int { return &c.Limits.RequestThrottleStallTime }),
	"request_throttle_stall_time":   decodeIntKey(func(c *Config) *int { return &c.Limits.RequestThrottleStallTime }),
	"requestThrottleDropStale":      javaBoolKey(func(c *Config) *bool { return &c.Limits.RequestThrottleDropStale }),
	"request_throttle_drop_stale":   javaBoolKey(func(c *Config) *bool { return &c.Limits.RequestThrottleDropStale }),

	"request_stale_connection_check": javaBoolKey(func(c *Config) *bool { return &c.Limits.RequestStaleConnectionCheck }),
	"request_stale_latency_check":    javaBoolKey(func(c *Config) *bool { return &c.Limits.RequestStaleLatencyCheck }),
	"throttled_op_wait_time":         decodeIntKey(func(c *Config) *int { return &c.Limits.ThrottledOpWaitTime }),

	"largeRequestThreshold": decodeIntKey(func(c *Config) *int { return &c.Limits.LargeRequestThreshold }),
	"largeRequestMaxBytes":  decodeIntKey(func(c *Config) *int { return &c.Limits.LargeRequestMaxBytes }),
}

func init() {
	for k, set := range limitKeys {
		keySetters[k] = set
	}
}

// doubleKey reads a system-property real number (Double.parseDouble).
func doubleKey(field func(*Config) *float64) setter {
	return func(a *assignment) error {
		v, err := strconv.ParseFloat(strings.TrimRight(a.value, "dDfF"), 64)
		if err != nil {
			return a.fail("not a number")
		}
		*field(a.c) = v
		return nil
	}
}
