package main

import (
	"errors"
	"testing"

	"github.com/wardenzk/warden/internal/status"
)

func TestHealthLine(t *testing.T) {
	srvr := func(mode status.Mode) status.Member {
		return status.Member{Addr: "h:2181", Srvr: status.Srvr{Mode: mode, Zxid: 0x100000003, HasZxid: true}}
	}
	tests := []struct {
		name    string
		member  status.Member
		want    string
		healthy bool
	}{
		{"standalone", srvr(status.ModeStandalone), "h:2181: standalone, zxid 0x100000003", true},
		{"leader", srvr(status.ModeLeader), "h:2181: leader, zxid 0x100000003", true},
		{"follower", srvr(status.ModeFollower), "h:2181: follower, zxid 0x100000003", true},
		{"observer", srvr(status.ModeObserver), "h:2181: observer, zxid 0x100000003", true},
		{"read-only", srvr(status.ModeReadOnly), "h:2181: read-only (cut off from its quorum)", false},
		{"not serving", status.Member{Addr: "h:2181", Err: status.ErrNotServing},
			"h:2181: not serving requests (electing a leader, syncing, or no quorum)", false},
		{"down", status.Member{Addr: "h:2181", Err: errors.New("connection refused")},
			"h:2181: down: connection refused", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, healthy := healthLine(status.Summarize([]status.Member{tt.member}).Rows[0])
			if got != tt.want || healthy != tt.healthy {
				t.Errorf("healthLine = %q, %v; want %q, %v", got, healthy, tt.want, tt.healthy)
			}
		})
	}
}
