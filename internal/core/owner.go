package core

import (
	"context"
	"strconv"
	"sync/atomic"
)

type ownerKey struct{}

var ownerSeq atomic.Uint64

// WithOwner returns ctx carrying an owner id, and that id: the one ctx already
// carries, or a new one. The id is unique within this process; the Client id
// makes it unique across processes (see Owner).
func WithOwner(ctx context.Context) (context.Context, string) {
	if id, ok := ctx.Value(ownerKey{}).(string); ok {
		return ctx, id
	}
	id := strconv.FormatUint(ownerSeq.Add(1), 36)
	return context.WithValue(ctx, ownerKey{}, id), id
}

// NewOwner returns ctx carrying a new owner id, whatever owner ctx carried,
// with ctx's values and cancellation.
func NewOwner(ctx context.Context) context.Context {
	return context.WithValue(ctx, ownerKey{}, strconv.FormatUint(ownerSeq.Add(1), 36))
}

// OwnerID returns the owner id ctx carries.
func OwnerID(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(ownerKey{}).(string)
	return id, ok
}

// Owner returns ctx carrying an owner and the owner's full name on this
// Client, "<client id>:<owner id>".
func (c *Core) Owner(ctx context.Context) (context.Context, string) {
	ctx, id := WithOwner(ctx)
	return ctx, c.ID + ":" + id
}

// OwnerOf returns the full owner name ctx carries on this Client, if any.
func (c *Core) OwnerOf(ctx context.Context) (string, bool) {
	id, ok := OwnerID(ctx)
	if !ok {
		return "", false
	}
	return c.ID + ":" + id, true
}
