package recipe

import (
	"testing"
)

func TestRevoke(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	holder := NewLock(lockConn(t, srv), "/revoke", WithRevocable(), WithLockData([]byte("ignored")))
	if holder.Revoked() != nil {
		t.Error("Revoked of an unheld lock is not nil")
	}
	lease, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := holder.c.Get(ctx, lease.Path)
	if err != nil || len(data) != 0 {
		t.Fatalf("revocable lock node data = %q, %v; want empty", data, err)
	}
	select {
	case <-holder.Revoked():
		t.Fatal("Revoked closed before any request")
	default:
	}

	rc := lockConn(t, srv)
	contender := NewLock(rc, "/revoke")
	watched, res := acquireAsync(t, ctx, contender)
	parts, err := contender.Participants(ctx)
	if err != nil || len(parts) != 2 || parts[0] != lease.Path || parts[0][len("/revoke/"):] != watched {
		t.Fatalf("participants = %v, %v (holder %s)", parts, err, lease.Path)
	}
	if err := Revoke(ctx, rc, parts[0]); err != nil {
		t.Fatal(err)
	}
	select {
	case <-holder.Revoked():
	case <-ctx.Done():
		t.Fatal("holder never saw the revoke request")
	}
	select {
	case <-holder.Lost():
		t.Fatal("a revoke request counted as a loss")
	default:
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustResult(t, ctx, res, "contender after revocation")
	if err := Revoke(ctx, rc, lease.Path); err != nil {
		t.Errorf("Revoke of a released node = %v, want nil", err)
	}
	if contender.Revoked() != nil {
		t.Error("Revoked of a non-revocable lock is not nil")
	}
	contender.Release(ctx)
}
