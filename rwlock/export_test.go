package rwlock

import "context"

// ReleaseOnce runs this side's release script once for owner with request id
// reqID, as a retried Unlock does after a lost reply.
func (l *Locker) ReleaseOnce(ctx context.Context, owner, reqID string) (int64, error) {
	return l.release(ctx, owner, reqID)
}
