package dstest

import (
	"context"
	"testing"
	"time"

	"github.com/distsync/distsync/election"
)

// Campaign is the outcome of a Campaign run by CampaignAsync.
type Campaign struct {
	Lead context.Context
	Term int64
	Err  error
}

// CampaignAsync runs e.Campaign(ctx, value) in a goroutine and returns where
// its outcome will be.
func CampaignAsync(e *election.Election, ctx context.Context, value string) <-chan Campaign {
	ch := make(chan Campaign, 1)
	go func() {
		l, term, err := e.Campaign(ctx, value)
		ch <- Campaign{l, term, err}
	}()
	return ch
}

// Elected returns the outcome of a campaign of CampaignAsync, failing the
// test unless it leads within d.
func Elected(tb testing.TB, ch <-chan Campaign, d time.Duration, what string) Campaign {
	tb.Helper()
	select {
	case c := <-ch:
		if c.Err != nil {
			tb.Fatalf("%s: %v", what, c.Err)
		}
		return c
	case <-time.After(d):
		tb.Fatalf("%s: not elected within %v", what, d)
	}
	return Campaign{}
}

// AwaitCandidates waits until n candidates queue in e.
func AwaitCandidates(tb testing.TB, e *election.Election, n int) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := e.Candidates(context.Background())
		if err == nil && got == n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d candidates, want %d (%v)", got, n, err)
		}
		time.Sleep(time.Millisecond)
	}
}
