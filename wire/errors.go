package wire

import "fmt"

// Code is a ZooKeeper error code (KeeperException.Code) as carried in
// ReplyHeader.err and multi results. A non-zero Code is an error value:
// compare with errors.Is(err, wire.ErrNoNode). This file is the one table
// between Go errors and wire codes.
type Code int32

// The error codes a server or client can produce. CodeOK is not an error.
const (
	CodeOK                       Code = 0
	ErrSystemError               Code = -1
	ErrRuntimeInconsistency      Code = -2
	ErrDataInconsistency         Code = -3
	ErrConnectionLoss            Code = -4
	ErrMarshallingError          Code = -5
	ErrUnimplemented             Code = -6
	ErrOperationTimeout          Code = -7
	ErrBadArguments              Code = -8
	ErrUnknownSession            Code = -12
	ErrNewConfigNoQuorum         Code = -13
	ErrReconfigInProgress        Code = -14
	ErrAPIError                  Code = -100
	ErrNoNode                    Code = -101
	ErrNoAuth                    Code = -102
	ErrBadVersion                Code = -103
	ErrNoChildrenForEphemerals   Code = -108
	ErrNodeExists                Code = -110
	ErrNotEmpty                  Code = -111
	ErrSessionExpired            Code = -112
	ErrInvalidCallback           Code = -113
	ErrInvalidACL                Code = -114
	ErrAuthFailed                Code = -115
	ErrSessionMoved              Code = -118
	ErrNotReadOnly               Code = -119
	ErrEphemeralOnLocalSession   Code = -120
	ErrNoWatcher                 Code = -121
	ErrRequestTimeout            Code = -122
	ErrReconfigDisabled          Code = -123
	ErrSessionClosedRequiresSASL Code = -124
	ErrQuotaExceeded             Code = -125
	ErrThrottled                 Code = -127
)

var codeText = map[Code]string{
	CodeOK:                       "ok",
	ErrSystemError:               "SystemError",
	ErrRuntimeInconsistency:      "RuntimeInconsistency",
	ErrDataInconsistency:         "DataInconsistency",
	ErrConnectionLoss:            "ConnectionLoss",
	ErrMarshallingError:          "MarshallingError",
	ErrUnimplemented:             "Unimplemented",
	ErrOperationTimeout:          "OperationTimeout",
	ErrBadArguments:              "BadArguments",
	ErrUnknownSession:            "UnknownSession",
	ErrNewConfigNoQuorum:         "NewConfigNoQuorum",
	ErrReconfigInProgress:        "ReconfigInProgress",
	ErrAPIError:                  "APIError",
	ErrNoNode:                    "NoNode",
	ErrNoAuth:                    "NoAuth",
	ErrBadVersion:                "BadVersion",
	ErrNoChildrenForEphemerals:   "NoChildrenForEphemerals",
	ErrNodeExists:                "NodeExists",
	ErrNotEmpty:                  "Directory not empty",
	ErrSessionExpired:            "Session expired",
	ErrInvalidCallback:           "Invalid callback",
	ErrInvalidACL:                "InvalidACL",
	ErrAuthFailed:                "AuthFailed",
	ErrSessionMoved:              "Session moved",
	ErrNotReadOnly:               "Not a read-only call",
	ErrEphemeralOnLocalSession:   "Ephemeral node on local session",
	ErrNoWatcher:                 "No such watcher",
	ErrRequestTimeout:            "Request timeout",
	ErrReconfigDisabled:          "Reconfig is disabled",
	ErrSessionClosedRequiresSASL: "Session closed because client failed to authenticate",
	ErrQuotaExceeded:             "Quota has exceeded",
	ErrThrottled:                 "Op throttled due to high load",
}

// Error returns ZooKeeper's text for the code ("KeeperErrorCode = NoNode").
func (c Code) Error() string {
	if t, ok := codeText[c]; ok {
		return "zk: KeeperErrorCode = " + t
	}
	return fmt.Sprintf("zk: unknown error %d", int32(c))
}

// CodeOf maps an error to the code sent on the wire: nil is CodeOK, a Code
// (or an error wrapping one) is itself, anything else ErrMarshallingError,
// as ZooKeeper answers unexpected failures.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var c Code
	if asCode(err, &c) {
		return c
	}
	return ErrMarshallingError
}

func asCode(err error, c *Code) bool {
	for err != nil {
		if v, ok := err.(Code); ok {
			*c = v
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}
