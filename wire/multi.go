package wire

import (
	"errors"
	"fmt"
)

// ErrBadMultiOp is the decoding error for a multi request or response
// holding an op type outside the tables of reference §7. ZooKeeper answers
// such a request with ErrMarshallingError.
var ErrBadMultiOp = errors.New("wire: invalid op type in multi")

// ErrMixedMulti is the decoding error for a multi request that mixes read
// ops (getData, getChildren) with write ops. ZooKeeper answers such a
// request with ErrMarshallingError.
var ErrMixedMulti = errors.New("wire: multi mixes read and write ops")

// MultiHeader precedes every op of a multi request and every result of a
// multi response. The list ends with MultiTerminator.
type MultiHeader struct {
	Type OpCode
	Done bool
	Err  Code
}

// MultiTerminator is the header that ends a multi request or response.
var MultiTerminator = MultiHeader{Type: OpError, Done: true, Err: ErrSystemError}

// Encode implements Record.
func (h *MultiHeader) Encode(e *Encoder) {
	e.Int32(int32(h.Type))
	e.Bool(h.Done)
	e.Int32(int32(h.Err))
}

// Decode implements Record.
func (h *MultiHeader) Decode(d *Decoder) {
	h.Type = OpCode(d.Int32())
	h.Done = d.Bool()
	h.Err = Code(d.Int32())
}

// MultiOp is one operation of a multi or multiRead request.
type MultiOp struct {
	Type OpCode
	// Req is the op's request record, of the type multiOpRecord gives for
	// Type: *CreateRequest for create, create2 and createContainer,
	// *CreateTTLRequest, *DeleteRequest, *SetDataRequest,
	// *CheckVersionRequest, *GetDataRequest or *GetChildrenRequest.
	Req Record
}

// MultiRequest is the body of multi (14) and multiRead (22)
// (MultiOperationRecord): ops, each after a MultiHeader, then
// MultiTerminator.
type MultiRequest struct {
	Ops []MultiOp
}

// Encode implements Record. Each op's header carries Err -1 and Done
// false, as the Java client writes them. Every Req must be non-nil.
func (m *MultiRequest) Encode(e *Encoder) {
	for _, op := range m.Ops {
		h := MultiHeader{Type: op.Type, Err: ErrSystemError}
		h.Encode(e)
		op.Req.Encode(e)
	}
	t := MultiTerminator
	t.Encode(e)
}

// Decode implements Record. It reads ops until a header with Done set
// (whose type and error are ignored, as ZooKeeper does) and fails with
// ErrBadMultiOp on an unknown op type and ErrMixedMulti when reads and
// writes are mixed. Every op consumes at least a 9-byte header, so the
// loop is bounded by the input.
func (m *MultiRequest) Decode(d *Decoder) {
	m.Ops = nil
	var h MultiHeader
	for h.Decode(d); d.Err() == nil && !h.Done; h.Decode(d) {
		req := multiOpRecord(h.Type)
		if req == nil {
			d.Fail(fmt.Errorf("%w: %d", ErrBadMultiOp, h.Type))
			return
		}
		if len(m.Ops) > 0 && isMultiRead(h.Type) != isMultiRead(m.Ops[0].Type) {
			d.Fail(ErrMixedMulti)
			return
		}
		req.Decode(d)
		m.Ops = append(m.Ops, MultiOp{Type: h.Type, Req: req})
	}
}

// ReadOnly reports whether m holds at least one op and only read ops
// (getData, getChildren): the ops multiRead accepts.
func (m *MultiRequest) ReadOnly() bool {
	return len(m.Ops) > 0 && isMultiRead(m.Ops[0].Type)
}

// multiOpRecord returns a fresh request record for an op type allowed in
// a multi request, or nil.
func multiOpRecord(t OpCode) Record {
	switch t {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}
	case OpCreateTTL:
		return &CreateTTLRequest{}
	case OpDelete:
		return &DeleteRequest{}
	case OpSetData:
		return &SetDataRequest{}
	case OpCheck:
		return &CheckVersionRequest{}
	case OpGetData:
		return &GetDataRequest{}
	case OpGetChildren:
		return &GetChildrenRequest{}
	}
	return nil
}

func isMultiRead(t OpCode) bool { return t == OpGetData || t == OpGetChildren }

// MultiResult is one result of a multi response. Type selects the record
// written after the header and thereby which fields are meaningful:
//
//	Type                Fields          record
//	OpCreate (1)        Path            CreateResponse
//	OpCreate2 (15)      Path, Stat      Create2Response (also for createTTL/createContainer ops)
//	OpDelete (2)        —               none
//	OpCheck (13)        —               none
//	OpSetData (5)       Stat            SetDataResponse
//	OpGetChildren (8)   Children        GetChildrenResponse
//	OpGetData (4)       Data, Stat      GetDataResponse
//	OpError (-1)        Err             ErrorResponse; Err also goes in the header
//
// A nil Stat encodes as an all-zero Stat; decoding allocates one for the
// types that carry it.
type MultiResult struct {
	Type     OpCode
	Err      Code
	Path     string
	Stat     *Stat
	Data     []byte
	Children []string
}

// MultiResponse is the body of a multi or multiRead reply: results, each
// after a MultiHeader, then MultiTerminator. The ReplyHeader's Err stays
// CodeOK even when the transaction failed.
type MultiResponse struct {
	Results []MultiResult
}

// FailedMultiResponse returns the response to a multi of n ops whose op
// at index failed was rejected with code: every result is an error
// result, CodeOK before the failed op and ErrRuntimeInconsistency after
// it, as ZooKeeper reports an aborted transaction.
func FailedMultiResponse(n, failed int, code Code) *MultiResponse {
	rs := make([]MultiResult, n)
	for i := range rs {
		rs[i].Type = OpError
		switch {
		case i < failed:
			rs[i].Err = CodeOK
		case i == failed:
			rs[i].Err = code
		default:
			rs[i].Err = ErrRuntimeInconsistency
		}
	}
	return &MultiResponse{Results: rs}
}

// Encode implements Record. It panics on a result Type outside the table
// of MultiResult: building such a result is a bug in the caller.
func (m *MultiResponse) Encode(e *Encoder) {
	for i := range m.Results {
		r := &m.Results[i]
		h := MultiHeader{Type: r.Type}
		if r.Type == OpError {
			h.Err = r.Err
		}
		h.Encode(e)
		switch r.Type {
		case OpCreate:
			e.String(r.Path)
		case OpCreate2:
			e.String(r.Path)
			statOrZero(r.Stat).Encode(e)
		case OpDelete, OpCheck:
		case OpSetData:
			statOrZero(r.Stat).Encode(e)
		case OpGetChildren:
			e.Strings(r.Children)
		case OpGetData:
			e.Buffer(r.Data)
			statOrZero(r.Stat).Encode(e)
		case OpError:
			e.Int32(int32(r.Err))
		default:
			panic(fmt.Sprintf("wire: MultiResponse.Encode: result %d has invalid type %d", i, r.Type))
		}
	}
	t := MultiTerminator
	t.Encode(e)
}

func statOrZero(s *Stat) *Stat {
	if s == nil {
		return &Stat{}
	}
	return s
}

// Decode implements Record. It reads results until a header with Done
// set and fails with ErrBadMultiOp on a type outside the table of
// MultiResult. For an error result Err comes from the ErrorResponse body,
// as the Java client takes it; the header's err is ignored.
func (m *MultiResponse) Decode(d *Decoder) {
	m.Results = nil
	var h MultiHeader
	for h.Decode(d); d.Err() == nil && !h.Done; h.Decode(d) {
		r := MultiResult{Type: h.Type}
		switch h.Type {
		case OpCreate:
			r.Path = d.String()
		case OpCreate2:
			r.Path = d.String()
			r.Stat = decodeStat(d)
		case OpDelete, OpCheck:
		case OpSetData:
			r.Stat = decodeStat(d)
		case OpGetChildren:
			r.Children = d.Strings()
		case OpGetData:
			r.Data = d.Buffer()
			r.Stat = decodeStat(d)
		case OpError:
			r.Err = Code(d.Int32())
		default:
			d.Fail(fmt.Errorf("%w: %d", ErrBadMultiOp, h.Type))
			return
		}
		m.Results = append(m.Results, r)
	}
}

func decodeStat(d *Decoder) *Stat {
	s := new(Stat)
	s.Decode(d)
	return s
}
