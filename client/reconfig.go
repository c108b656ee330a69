package client

import (
	"context"
	"fmt"
	"strings"

	"github.com/wardenzk/warden/wire"
)

// AnyConfig as the fromConfig of Reconfig and IncrementalReconfig applies
// the change to whatever configuration is current.
const AnyConfig int64 = -1

// Reconfig replaces the ensemble's membership with members (a
// non-incremental reconfig, ZooKeeperAdmin.reconfigure with newMembers):
// each element is a dynamic-configuration line such as
// "server.4=10.0.0.4:2888:3888:participant;10.0.0.4:2181". fromConfig is
// the version the change applies to (EnsembleConfig.Version of the
// configuration it was computed from), or AnyConfig.
//
// It returns the new configuration (the data of /zookeeper/config) and
// the node's Stat. The server must allow reconfig (else
// ErrReconfigDisabled) and the session needs WRITE on /zookeeper/config,
// normally the super user (else ErrNoAuth). Other errors: ErrBadVersion
// (fromConfig is not current), ErrBadArguments (the membership does not
// parse or is too small), ErrNewConfigNoQuorum, ErrReconfigInProgress,
// ErrUnimplemented (a standalone server).
func (c *Conn) Reconfig(ctx context.Context, members []string, fromConfig int64) ([]byte, Stat, error) {
	if len(members) == 0 {
		return nil, Stat{}, fmt.Errorf("%w: a non-incremental reconfig needs the new membership", wire.ErrBadArguments)
	}
	return c.reconfig(ctx, &wire.ReconfigRequest{
		NullJoining: true, NullLeaving: true,
		NewMembers:  strings.Join(members, ","),
		CurConfigID: fromConfig,
	})
}

// IncrementalReconfig adds the joining servers (dynamic-configuration
// lines, "server.N=host:quorumPort:electionPort[:role];[clientHost:]clientPort";
// a line for an existing id replaces it) and removes the leaving ones
// (server ids, "3"). Either may be empty. fromConfig, the result and the
// errors are those of Reconfig.
func (c *Conn) IncrementalReconfig(ctx context.Context, joining, leaving []string, fromConfig int64) ([]byte, Stat, error) {
	return c.reconfig(ctx, &wire.ReconfigRequest{
		JoiningServers: strings.Join(joining, ","), NullJoining: len(joining) == 0,
		LeavingServers: strings.Join(leaving, ","), NullLeaving: len(leaving) == 0,
		NullMembers: true,
		CurConfigID: fromConfig,
	})
}

func (c *Conn) reconfig(ctx context.Context, req *wire.ReconfigRequest) ([]byte, Stat, error) {
	var resp wire.GetDataResponse
	if err := c.call(ctx, newRequest(wire.OpReconfig, req, &resp)); err != nil {
		return nil, Stat{}, err
	}
	return resp.Data, resp.Stat, nil
}
