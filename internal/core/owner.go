package core

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
)

type ownerKey struct{}

// ownerCtx carries an owner id: context.WithValue(ctx, ownerKey{}, id) in
// one object. Grant folds it into the acquisition it makes (see Acq.Value).
type ownerCtx struct {
	context.Context
	id string
}

func (c *ownerCtx) Value(key any) any {
	if key == (ownerKey{}) {
		return c.id
	}
	return c.Context.Value(key)
}

// String names the context, as those of package context do.
func (c *ownerCtx) String() string {
	return fmt.Sprintf("%v.WithValue(distsync owner %s)", c.Context, c.id)
}

var ownerSeq atomic.Uint64

// WithOwner returns ctx carrying an owner id, and that id: the one ctx already
// carries, or a new one. The id is unique within this process; the Client id
// makes it unique across processes (see Owner).
func WithOwner(ctx context.Context) (context.Context, string) {
	if id, ok := ctx.Value(ownerKey{}).(string); ok {
		return ctx, id
	}
	id := strconv.FormatUint(ownerSeq.Add(1), 36)
	return &ownerCtx{ctx, id}, id
}

// NewOwner returns ctx carrying a new owner id, whatever owner ctx carried,
// with ctx's values and cancellation.
func NewOwner(ctx context.Context) context.Context {
	return &ownerCtx{ctx, strconv.FormatUint(ownerSeq.Add(1), 36)}
}

// OwnerID returns the owner id ctx carries.
func OwnerID(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(ownerKey{}).(string)
	return id, ok
}

// NewAcq names a new acquisition of the owner whose id is oid (WithOwner):
// it returns the owner's full name on this Client, "<client id>:<owner
// id>", the acquisition's id (NewAcqID), and the two joined by ':' (the
// waiter id of the kinds whose waiters are acquisitions). The three share one allocation.
func (c *Core) NewAcq(oid string) (owner, id, joined string) {
	var buf [96]byte
	b := append(append(append(buf[:0], c.ID...), ':'), oid...)
	n := len(b)
	b = strconv.AppendUint(append(append(b, ':'), acqPrefix...), acqSeq.Add(1), 36)
	joined = string(b)
	return joined[:n], joined[n+1:], joined
}

// ownerID returns the owner id of full, an owner's full name on this Client,
// and whether full is one (a permit's owner, its id, is not).
func (c *Core) ownerID(full string) (string, bool) {
	n := len(c.ID)
	if len(full) <= n || full[n] != ':' || full[:n] != c.ID {
		return "", false
	}
	return full[n+1:], true
}

// OwnerOf returns the full owner name ctx carries on this Client, if any.
func (c *Core) OwnerOf(ctx context.Context) (string, bool) {
	id, ok := OwnerID(ctx)
	if !ok {
		return "", false
	}
	return c.ID + ":" + id, true
}
