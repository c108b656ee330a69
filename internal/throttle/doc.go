// Package throttle holds the pure decision rules of Warden's admission
// control, with time and randomness as inputs so tests drive them without
// sleeping:
//
//   - Bucket is ZooKeeper 3.6's connection throttler (BlueThrottle): a
//     token bucket that new sessions draw from, with an optional
//     probabilistic drop that grows while the bucket stays empty.
//   - Weights are the tokens a session establishment costs when
//     connection_throttle_weight_enabled is on.
//
// The server (package server) wires these into the accept path; nothing
// here blocks, sleeps or reads a clock.
package throttle
