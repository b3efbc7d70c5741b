package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/notify"
	"github.com/distsync/distsync/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// After a reconnect every waiter re-checks: a release whose notification was
// never published (the key deleted behind distsync's back) is found once the
// subscription is re-established, not when the waiter's timer fires.
func TestWaitersRecheckAfterReconnect(t *testing.T) {
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	c := dstest.ClientOn(t, s)
	m, err := c.Mutex("reconnect")
	require.NoError(t, err)
	ctx := context.Background()
	held, err := m.TryLock(ctx, 0, 10*time.Minute)
	require.NoError(t, err)
	_ = held

	timerBefore := acquire.Counters().Timer.Load()
	got := make(chan error, 1)
	go func() {
		w, err := m.Lock(ctx)
		if err == nil {
			err = m.Unlock(w)
		}
		got <- err
	}()
	dstest.WaitWaiters(t, c, m.Key()+":waiters", 1)
	rc := s.Client(t)

	// Free the lock without a notification, then drop the subscriber's connection.
	require.NoError(t, rc.Do(ctx, rc.B().Del().Key(m.Key()).Build()).Error())
	require.NoError(t, rc.Do(ctx, rc.B().ClientKill().TypePubsub().Build()).Error())
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("waiter did not re-check after the reconnect")
	}
	assert.Equal(t, timerBefore, acquire.Counters().Timer.Load(), "woken by the resubscription, not by its timer")
}

// One subscription per channel serves every local waiter, and a release
// wakes them through it.
func TestOneSubscriptionPerChannel(t *testing.T) {
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	c := dstest.ClientOn(t, s)
	m, err := c.Mutex("shared")
	require.NoError(t, err)
	ctx := context.Background()
	held, err := m.TryLock(ctx, 0, 10*time.Minute)
	require.NoError(t, err)
	const waiters = 8
	done := make(chan error, waiters)
	for range waiters {
		go func() {
			w, err := m.Lock(ctx)
			if err == nil {
				err = m.Unlock(w)
			}
			done <- err
		}()
	}
	dstest.WaitWaiters(t, c, m.Key()+":waiters", waiters)
	rc := s.Client(t)
	ch := m.Key() + ":ch:" + c.ID() // a mutex tells a waiter on its Client's own channel
	counts, err := rc.Do(ctx, rc.B().PubsubNumsub().Channel(ch).Build()).AsIntMap()
	require.NoError(t, err)
	assert.Equal(t, int64(1), counts[ch], "one subscription for %d local waiters", waiters)
	require.NoError(t, m.Unlock(held))
	for range waiters {
		require.NoError(t, <-done)
	}
	var _ *distsync.Client = c
}

// Control messages (core's control channel) that arrive before the
// subscriber takes the first are all kept, not only the last: each names
// holds taken over, and none may be lost.
func TestControlMessagesAccumulate(t *testing.T) {
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	rc := s.Client(t)
	n := notify.New(rc, false, nil)
	defer n.Close()
	ctx := context.Background()
	sub, err := n.SubscribeClassic(ctx, "ctl-test", core.ControlWaiter)
	require.NoError(t, err)
	defer sub.Close()
	for _, msg := range []string{"g:ctl o1 k1 - -", "g:ctl o2 k2 a2 -"} {
		require.NoError(t, rc.Do(ctx, rc.B().Publish().Channel("ctl-test").Message(msg).Build()).Error())
	}
	deadline := time.Now().Add(20 * time.Second)
	for n.Stats().Grants.Load() < 2 {
		require.True(t, time.Now().Before(deadline), "both messages delivered")
		time.Sleep(time.Millisecond)
	}
	<-sub.C()
	grant, _, _ := sub.Take()
	assert.Equal(t, "o1 k1 - o2 k2 a2", grant)
}

// The rueidis client under a Client is closed (its owner closed it first, or
// its process is going down) while a waiter waits: no subscription can come
// back, so the waiter is woken at once and returns the Client's closing,
// rather than sleeping to its timer (here the holder's 10-minute lease).
func TestWaiterEndsWhenTheClientUnderneathCloses(t *testing.T) {
	s := redistest.Start(t)
	c, holder := dstest.ClientOn(t, s), dstest.ClientOn(t, s)
	name := dstest.Name(t)
	hm, err := holder.Mutex(name)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = hm.TryLock(ctx, 0, 10*time.Minute)
	require.NoError(t, err)
	m, err := c.Mutex(name)
	require.NoError(t, err)
	timerBefore := acquire.Counters().Timer.Load()
	got := make(chan error, 1)
	go func() {
		_, err := m.Lock(ctx)
		got <- err
	}()
	dstest.WaitWaiters(t, holder, m.Key()+":waiters", 1)
	c.Rueidis().Close()
	select {
	case err := <-got:
		require.ErrorIs(t, err, distsync.ErrClosed)
	case <-time.After(time.Minute):
		t.Fatal("the waiter sleeps on after its Client's connections closed")
	}
	assert.Equal(t, timerBefore, acquire.Counters().Timer.Load(), "woken when the subscription could not come back, not by its timer")
}
