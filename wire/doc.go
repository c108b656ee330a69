// Package wire is ZooKeeper's client protocol, byte for byte: jute
// encoding (codec.go), frames (frame.go), every request and response
// record (records.go, multi.go), opcodes and constants (types.go) and the
// one table between Go errors and wire error codes (errors.go).
//
// The package is pure: it never touches a socket except through the
// io.Reader given to ReadFrame, holds no state and starts no goroutines.
// Every decoder is fuzzed and bounded: a length or vector count larger
// than the bytes that remain fails at once instead of allocating.
//
// # Frames
//
// Every message in both directions is a frame:
//
//	0         4                    4+len
//	+---------+---------------------+
//	| len     | payload (len bytes) |
//	| int32 BE|                     |
//	+---------+---------------------+
//
// A len below 0 or above jute.maxbuffer (DefaultMaxBuffer) is fatal for
// the connection: ReadFrame returns an error wrapping ErrFrameTooLarge.
// Writers build frames with AppendFrame or AppendRecords, which reserve the
// length, encode, and patch it.
//
// The first four bytes a new connection sends are either that length or a
// four-letter-word command such as "ruok" (FourLetterWord tells which; as
// integers all such words exceed any legal length). A command is answered
// in plain text and the connection is closed.
//
// # Handshake
//
// The first frame from the client is a ConnectRequest and the answer a
// ConnectResponse, neither with a header. The trailing readOnly byte is
// optional: clients that omit it get a response without it
// (HasReadOnly).
//
//	ConnectRequest  (45 bytes with a 16-byte password and readOnly)
//	+---------+--------------+---------+-----------+------------------+----------+
//	| protoVer| lastZxidSeen | timeOut | sessionId | passwd           | readOnly |
//	| int32   | int64        | int32   | int64     | int32 len + bytes| byte, opt|
//	+---------+--------------+---------+-----------+------------------+----------+
//
//	ConnectResponse (37 bytes with a 16-byte password and readOnly)
//	+---------+---------+-----------+------------------+----------+
//	| protoVer| timeOut | sessionId | passwd           | readOnly |
//	| int32   | int32   | int64     | int32 len + bytes| byte, opt|
//	+---------+---------+-----------+------------------+----------+
//
// # Requests and replies
//
// After the handshake every client payload starts with a RequestHeader
// and every server payload with a ReplyHeader:
//
//	request payload                     reply payload
//	+-------+-------+--------------+    +-------+-------+-------+-------------+
//	| xid   | type  | request body |    | xid   | zxid  | err   | reply body  |
//	| int32 | int32 | (per opcode) |    | int32 | int64 | int32 | if err == 0 |
//	+-------+-------+--------------+    +-------+-------+-------+-------------+
//
// RequestFor maps an opcode to the request record of its body (none for
// ping, closeSession and whoAmI). The reply body is sent only when err is
// CodeOK, except for multi (whose header err is always 0) and a failed
// SASL exchange. Reserved xids: XidNotification (-1, a WatcherEvent from
// the server), XidPing (-2), XidAuth (-4), XidSetWatches (-8).
//
// # Multi
//
// The body of multi and multiRead is a list of ops, each a MultiHeader
// followed by the op's request record, ended by MultiTerminator; the
// response has the same shape with result records:
//
//	   op or result 1                  op or result 2                terminator
//	+-------+------+-------+--------+-------+------+-------+--------+ ... +-------+------+-------+
//	| type  | done | err   | record | type  | done | err   | record |     | -1    | 1    | -1    |
//	| int32 | 0    | int32 |        | int32 | 0    | int32 |        |     | int32 | byte | int32 |
//	+-------+------+-------+--------+-------+------+-------+--------+ ... +-------+------+-------+
//
// In a request each header's err is -1; in a response it is the error code
// of an error result (type -1) and 0 otherwise.
//
// A multi that fails answers with one error result (type -1) per op:
// CodeOK before the failed op, its code, then ErrRuntimeInconsistency
// (FailedMultiResponse).
//
// # Encoding rules
//
// Integers are big-endian. Strings and buffers are an int32 length and
// the bytes; vectors an int32 count and the elements. Length -1 is null:
// a nil []byte or []string (or []ACL) encodes as -1 and decodes back to
// nil, an empty one as 0; a null string decodes as "". Decoders copy what
// they return, so records never alias the frame buffer.
package wire
