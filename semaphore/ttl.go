package semaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// TrySetPermitsTTL is TrySetPermits of a semaphore that disappears when
// nobody uses it (Redisson's trySetPermits(permits, timeToLive)): it is
// deleted ttl after the last change of its count (an acquisition, a
// release, AddPermits, SetPermits, Drain), as if its permits were never set;
// a TrySetPermits or TrySetPermitsTTL then sets them anew, and a Release
// releases nothing (ErrNotSet). Taken permits do
// not keep it: make ttl longer than a permit is kept. Waiting for permits
// is no use of it. It returns ErrInvalidArgument for ttl < 1 ms. One round
// trip.
func (s *Semaphore) TrySetPermitsTTL(ctx context.Context, n int64, ttl time.Duration) (bool, error) {
	p := s.p()
	if ttl < time.Millisecond {
		if err := p.check(0, n); err != nil {
			return false, err
		}
		return false, p.errorf(fmt.Errorf("%w: time to live %v, want at least 1ms", core.ErrInvalidArgument, ttl))
	}
	return p.trySetPermits(ctx, n, core.Ms(ttl))
}
