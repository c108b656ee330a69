package zkimport

// superSecret is ZooKeeperServer.superSecret, mixed into the seed of every
// session password.
const superSecret = 0xB3415C00

// Password returns the password ZooKeeper gave session id
// (ZooKeeperServer.generatePasswd): 16 bytes of java.util.Random seeded
// with id ^ superSecret. A client reconnecting with its session presents
// it, so an imported session must keep it.
func Password(id int64) []byte {
	const (
		mult = 0x5DEECE66D
		mask = 1<<48 - 1
	)
	seed := (uint64(id) ^ superSecret ^ mult) & mask
	out := make([]byte, 16)
	for i := 0; i < len(out); {
		seed = (seed*mult + 0xB) & mask
		rnd := int32(seed >> 16) // next(32)
		for n := min(len(out)-i, 4); n > 0; n-- {
			out[i] = byte(rnd)
			rnd >>= 8
			i++
		}
	}
	return out
}
