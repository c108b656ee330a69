package config

import (
	"errors"
	"strings"
	"testing"
)

func TestLimitsDefaultsAreZooKeepers(t *testing.T) {
	c := mustParse(t, "dataDir=/d\nclientPort=2181")
	l := c.Limits
	if l.Connection.MaxTokens != 0 || l.Connection.FillTime != 1 || l.Connection.FillCount != 1 ||
		l.Connection.FreezeTime != -1 || l.Connection.DropIncrease != 0.02 || l.Connection.DropDecrease != 0.002 ||
		l.Connection.DecreaseRatio != 0 {
		t.Errorf("connection throttle defaults %+v", l.Connection)
	}
	if w := l.ConnectionWeights; w.Enabled || w.Global != 3 || w.Local != 1 || w.Renew != 2 {
		t.Errorf("weights %+v", w)
	}
	if l.RequestThrottleMaxRequests != 0 || l.RequestThrottleStallTime != 100 || !l.RequestThrottleDropStale ||
		!l.RequestStaleConnectionCheck || l.RequestStaleLatencyCheck || l.ThrottledOpWaitTime != 0 {
		t.Errorf("request throttle defaults %+v", l)
	}
	if l.LargeRequestThreshold != -1 || l.LargeRequestMaxBytes != 100<<20 {
		t.Errorf("large request defaults %d %d", l.LargeRequestThreshold, l.LargeRequestMaxBytes)
	}
}

func TestLimitsKeysBothSpellings(t *testing.T) {
	tests := []struct {
		in    string
		check func(Limits) bool
	}{
		{"connectionMaxTokens=50", func(l Limits) bool { return l.Connection.MaxTokens == 50 }},
		{"zookeeper.connection_throttle_tokens=0x10", func(l Limits) bool { return l.Connection.MaxTokens == 16 }},
		{"connectionMaxTokens=5\nconnection_throttle_tokens=7", func(l Limits) bool { return l.Connection.MaxTokens == 7 }},
		{"connectionTokenFillTime=20\nconnectionTokenFillCount=3", func(l Limits) bool {
			return l.Connection.FillTime == 20 && l.Connection.FillCount == 3
		}},
		{"connection_throttle_fill_time=20\nconnection_throttle_fill_count=3", func(l Limits) bool {
			return l.Connection.FillTime == 20 && l.Connection.FillCount == 3
		}},
		{"connectionFreezeTime=100\nconnectionDropIncrease=0.1\nconnectionDropDecrease=2e-2\nconnectionDecreaseRatio=0.5d",
			func(l Limits) bool {
				c := l.Connection
				return c.FreezeTime == 100 && c.DropIncrease == 0.1 && c.DropDecrease == 0.02 && c.DecreaseRatio == 0.5
			}},
		{"zookeeper.connection_throttle_freeze_time=10\nconnection_throttle_drop_increase=0.5\nconnection_throttle_drop_decrease=0.25\nconnection_throttle_decrease_ratio=0.75",
			func(l Limits) bool {
				c := l.Connection
				return c.FreezeTime == 10 && c.DropIncrease == 0.5 && c.DropDecrease == 0.25 && c.DecreaseRatio == 0.75
			}},
		{"zookeeper.connection_throttle_weight_enabled=true\nconnection_throttle_global_session_weight=5\nconnection_throttle_local_session_weight=2\nconnection_throttle_renew_session_weight=4",
			func(l Limits) bool {
				w := l.ConnectionWeights
				return w.Enabled && w.Global == 5 && w.Local == 2 && w.Renew == 4
			}},
		{"requestThrottleLimit=10\nrequestThrottleStallTime=5\nrequestThrottleDropStale=false", func(l Limits) bool {
			return l.RequestThrottleMaxRequests == 10 && l.RequestThrottleStallTime == 5 && !l.RequestThrottleDropStale
		}},
		{"zookeeper.request_throttle_max_requests=10\nrequest_throttle_stall_time=5\nrequest_throttle_drop_stale=false", func(l Limits) bool {
			return l.RequestThrottleMaxRequests == 10 && l.RequestThrottleStallTime == 5 && !l.RequestThrottleDropStale
		}},
		{"request_stale_connection_check=false\nrequest_stale_latency_check=true\nthrottled_op_wait_time=250", func(l Limits) bool {
			return !l.RequestStaleConnectionCheck && l.RequestStaleLatencyCheck && l.ThrottledOpWaitTime == 250
		}},
		{"largeRequestThreshold=1024\nzookeeper.largeRequestMaxBytes=1048576", func(l Limits) bool {
			return l.LargeRequestThreshold == 1024 && l.LargeRequestMaxBytes == 1<<20
		}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c := mustParse(t, "dataDir=/d\nclientPort=2181\n"+tt.in)
			if !tt.check(c.Limits) {
				t.Errorf("not applied: %+v", c.Limits)
			}
			if len(c.Warnings) != 0 {
				t.Errorf("warnings: %q", c.Warnings)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestLimitsBadValues(t *testing.T) {
	for _, in := range []string{
		"connectionMaxTokens=many",
		"connectionDropIncrease=lots",
		"request_throttle_max_requests=1.5",
	} {
		if _, err := Parse(strings.NewReader("dataDir=/d\nclientPort=2181\n"+in), ""); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Parse error %v, want ErrInvalid", in, err)
		}
	}
	for _, in := range []string{
		"connectionMaxTokens=10\nconnectionTokenFillTime=0",
		"connectionMaxTokens=-1",
		"request_throttle_max_requests=10\nrequest_throttle_stall_time=0",
	} {
		c := mustParse(t, "dataDir=/d\nclientPort=2181\n"+in)
		if err := c.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: Validate() = %v, want ErrInvalid", in, err)
		}
	}
}
