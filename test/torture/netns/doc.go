// Package netns gives each ensemble member of a torture run its own test
// host: a Linux network namespace with one interface and one IPv4
// address, wired to the others through a bridge, so that the harness can
// cut the network between members (Partition, Heal) and fill a member's
// disk (Disk) while real server processes run.
//
// # Topology
//
// Create(prefix, n) builds, for one 10.A.B.0/24 chosen free on the host:
//
//	 host (root) namespace                hub namespace "<key>-hub"
//	+---------------------------+        +------------------------------+
//	| <key>-h  10.A.B.1/24  ----+--veth--+-- host ---+                  |
//	| (test clients dial from   |        |           |                  |
//	|  here to 10.A.B.11 ...)   |        |        br0 (bridge)          |
//	+---------------------------+        |           |                  |
//	                                     |  m0 ------+------ m1  ...    |
//	                                     +--|-----------------|---------+
//	                                      veth              veth
//	 member namespace "<key>-m0"            |                 |
//	+-------------------------------+      |                 |
//	| eth0  10.A.B.11/24  ----------+------+                 |
//	| lo up; table inet torture     |                        |
//	+-------------------------------+  "<key>-m1": eth0 10.A.B.12/24 ...
//
// Member i (0-based) has address 10.A.B.(11+i) on its eth0; the host end
// of the host link has 10.A.B.1, so clients in the test process reach
// every member directly and members reach the clients. The key is
// "<prefix>-<k>" with the smallest k that is free, so two Nets may share
// a prefix.
//
// Why a hub namespace: a Docker engine (present on developer machines and
// CI) loads br_netfilter and sets the root namespace's iptables FORWARD
// policy to DROP. A bridge in the root namespace would then pass every
// bridged member-to-member frame through that FORWARD chain and drop it.
// A fresh namespace starts with empty netfilter tables that accept
// everything, so the bridge lives in its own namespace, and the host is
// just one more port on it (its traffic is local output and input in the
// root namespace, which Docker does not filter).
//
// # Faults
//
// Partition installs, in each member namespace, an nftables table
// "inet torture" whose input and output chains silently drop packets
// from and to the members that member must not reach. Rules match
// addresses only (no connection tracking), so they cut established
// connections as well as new ones, from the next packet on. The host
// address is never cut. Heal deletes the tables.
//
// MountDisk mounts a size-limited tmpfs on a member's data directory;
// Disk.Fill fills it until the file system returns ENOSPC.
//
// # Running processes
//
// Command(i, name, args...) wraps a command line in "ip netns exec", which
// execs the program in member i's namespace (the pid is the program's).
// Do runs a function on an OS thread inside a member namespace, for
// sockets opened from the test process itself.
//
// # Leftovers
//
// Every Net records what it makes in a state file
// /run/warden-torture/<key>.json together with its owner (pid and process
// start time) before it makes anything. Create first takes the lock
// /run/warden-torture/lock and removes what dead owners left behind (a
// test binary killed by -timeout): it kills processes still in their
// namespaces, deletes the namespaces and host links, unmounts their
// disks and removes their state files. Namespaces, links and tmpfs mounts
// that follow this package's naming with a "wt" prefix but have no state
// file are removed too.
//
// # Requirements
//
// Root (CAP_NET_ADMIN and CAP_SYS_ADMIN), and the commands ip (iproute2)
// and nft (nftables) in PATH. Create fails with ErrNotRoot or
// ErrMissingCommand naming what is absent; it never degrades silently.
package netns
