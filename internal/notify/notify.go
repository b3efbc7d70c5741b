// Package notify is a Client's pub/sub fan-out: one subscription per channel,
// shared by every local waiter on that channel, reference-counted, and
// re-established after a reconnect, when every waiter is woken to re-check.
//
// Messages are wake-ups. The payload says whom to wake:
//
//	""                   every local waiter on the channel
//	"n:<k>"              up to k local waiters, oldest first (k permits became available)
//	"w:<id>[ <next>]"    the local waiter registered as id (the head of a fair
//	                     queue, the oldest waiter of a mutex)
//	"g:<id> <data> <next>" the local waiter registered as id was granted the
//	                     lock: data (the rest but the last field) tells it
//	                     what it holds, and it needs no attempt (Take);
//	                     for the control waiter (core.ControlWaiter), the
//	                     data of messages not yet taken are joined
//
// <next>, when not "-", names the waiter after the one woken: it is nudged
// (Take reports it), so that it bounds its sleep in case the one woken or
// granted has vanished; "<id>,<id>" names two (the second in case the
// first vanished too); "*" nudges every local waiter on the channel.
package notify

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/core"
)

// Linger is how long a subscription outlives its last waiter, so that waiters
// that come and go on a busy lock do not pay a SUBSCRIBE each time.
const Linger = 2 * time.Second

// Stats counts deliveries, for tests and benchmarks.
type Stats struct {
	Messages atomic.Int64 // messages received
	Wakes    atomic.Int64 // local waiters woken by messages (grants included)
	Grants   atomic.Int64 // local waiters told by a message that they hold
	Nudges   atomic.Int64 // local waiters nudged as the next in line
}

// Notifier fans out a Client's pub/sub messages to local waiters.
type Notifier struct {
	client  rueidis.Client
	sharded bool
	log     *slog.Logger

	mu     sync.Mutex
	chans  map[string]*channel
	closed bool
	wg     sync.WaitGroup

	stats Stats
}

type channel struct {
	name    string
	subs    []*Sub
	named   map[string][]*Sub // subs by waiter id ("" left out): 'w:' and 'g:' find theirs without a scan
	active  chan struct{}     // closed once the server confirmed the subscription
	isUp    bool
	failed  chan struct{} // closed when subscribing failed before it was ever up
	err     error
	cancel  context.CancelFunc
	done    chan struct{} // closed when the subscription's goroutine has ended
	ended   chan struct{} // closed (end) when no subscription can come back: the notifier closed, or the rueidis client under it
	closing bool
	linger  *time.Timer
	classic bool // SUBSCRIBE even on Cluster (SubscribeClassic)
}

// Sub is one local waiter's subscription.
type Sub struct {
	n      *Notifier
	ch     *channel
	waiter string
	c      chan struct{}

	// What the signals on c said, under n.mu until Take.
	woken  bool
	grant  string
	nudged bool
}

// New returns a notifier on c; sharded selects SSUBSCRIBE (Redis Cluster).
func New(c rueidis.Client, sharded bool, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.Default()
	}
	return &Notifier{client: c, sharded: sharded, log: log, chans: map[string]*channel{}}
}

// Stats returns the notifier's counters.
func (n *Notifier) Stats() *Stats { return &n.stats }

// Subscribe registers a local waiter (waiter may be "") on channel and returns
// once the server has confirmed the channel's subscription, so that anything
// published after Subscribe returns reaches the waiter. The first waiter of a
// channel costs one SUBSCRIBE round trip; later ones share it.
func (n *Notifier) Subscribe(ctx context.Context, name, waiter string) (core.Subscription, error) {
	return n.subscribe(ctx, name, waiter, false)
}

// SubscribeClassic is Subscribe with SUBSCRIBE on Cluster too, for a
// channel that a script publishes to with PUBLISH from any slot (a Cluster
// forwards those to every node).
func (n *Notifier) SubscribeClassic(ctx context.Context, name, waiter string) (core.Subscription, error) {
	return n.subscribe(ctx, name, waiter, true)
}

func (n *Notifier) subscribe(ctx context.Context, name, waiter string, classic bool) (core.Subscription, error) {
	n.mu.Lock()
	for {
		if n.closed {
			n.mu.Unlock()
			return nil, core.ErrClosed
		}
		st := n.chans[name]
		if st == nil || !st.closing {
			break
		}
		// The previous subscription is being torn down: wait for it, so
		// its UNSUBSCRIBE cannot cancel ours.
		done := st.done
		n.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		n.mu.Lock()
	}
	st := n.chans[name]
	if st == nil {
		st = n.start(name, classic)
	}
	if st.linger != nil {
		st.linger.Stop()
		st.linger = nil
	}
	s := &Sub{n: n, ch: st, waiter: waiter, c: make(chan struct{}, 1)}
	st.add(s)
	n.mu.Unlock()

	select {
	case <-st.active:
		return s, nil
	case <-st.failed:
		s.Close()
		return nil, st.err
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// Join registers a local waiter on channel when the channel's subscription
// is up (anything published from now on reaches it), and returns nil
// otherwise: it never waits.
func (n *Notifier) Join(name, waiter string) core.Subscription {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.chans[name]
	if n.closed || st == nil || !st.isUp || st.closing {
		return nil
	}
	if st.linger != nil {
		st.linger.Stop()
		st.linger = nil
	}
	s := &Sub{n: n, ch: st, waiter: waiter, c: make(chan struct{}, 1)}
	st.add(s)
	return s
}

// start begins the subscription of a channel; n.mu is held.
func (n *Notifier) start(name string, classic bool) *channel {
	ctx, cancel := context.WithCancel(context.Background())
	st := &channel{
		name:    name,
		classic: classic,
		active:  make(chan struct{}),
		failed:  make(chan struct{}),
		cancel:  cancel,
		done:    make(chan struct{}),
		ended:   make(chan struct{}),
	}
	n.chans[name] = st
	n.wg.Add(1)
	go n.run(ctx, st)
	return st
}

func (n *Notifier) run(ctx context.Context, st *channel) {
	defer n.wg.Done()
	defer close(st.done)
	defer func() {
		n.mu.Lock()
		if n.chans[st.name] == st {
			delete(n.chans, st.name)
		}
		if !st.isUp && st.err == nil {
			// Closed before the server confirmed: release the waiters.
			st.err = core.ErrClosed
			close(st.failed)
		}
		n.mu.Unlock()
	}()

	rctx := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == "subscribe" || s.Kind == "ssubscribe" {
			n.up(st)
		}
	})
	rctx = rueidis.WithOnReceiveReturnHook(rctx, func(err error, c rueidis.CommandClient) error {
		if ctx.Err() != nil {
			// Leaving: tell the server, on the connection that subscribed.
			uctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if n.sharded && !st.classic {
				c.Do(uctx, c.B().Sunsubscribe().Channel(st.name).Build())
			} else {
				c.Do(uctx, c.B().Unsubscribe().Channel(st.name).Build())
			}
		}
		return err
	})
	backoff := 50 * time.Millisecond
	for {
		// A fresh command each time: rueidis recycles the one Receive was
		// given when the subscription ends without error (as a Cluster
		// failover ends a sharded one), so it must not be sent again.
		var cmd rueidis.Completed
		if n.sharded && !st.classic {
			cmd = n.client.B().Ssubscribe().Channel(st.name).Build()
		} else {
			cmd = n.client.B().Subscribe().Channel(st.name).Build()
		}
		err := n.client.Receive(rctx, cmd, func(m rueidis.PubSubMessage) { n.deliver(st, m.Message) })
		if ctx.Err() != nil {
			return
		}
		n.mu.Lock()
		wasUp := st.isUp
		if !wasUp {
			if err == nil {
				err = core.ErrClosed
			}
			st.err = err
			close(st.failed)
			st.closing = true
		}
		// The rueidis client under the Client was closed (its owner closed
		// it first, its process is going down): no subscription comes back.
		// The channel's waiters end their sleep as at Close (Sub.Done),
		// rather than at their timers; new ones subscribe anew (and fail).
		gone := wasUp && errors.Is(err, rueidis.ErrClosing)
		if gone {
			st.closing = true
			st.end()
		}
		n.mu.Unlock()
		if !wasUp {
			return
		}
		if gone {
			n.log.Debug("distsync: subscription ended: the rueidis client is closed", "channel", st.name)
			return
		}
		n.log.Warn("distsync: subscription ended, resubscribing", "channel", st.name, "err", err)
		// Waiters re-check when the subscription is back (see up); until then
		// their own timers bound their sleep.
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// up runs when the server confirms the subscription: the first time it
// releases the waiters blocked in Subscribe; after a reconnect it wakes every
// waiter, since a release may have been published while it was down.
func (n *Notifier) up(st *channel) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !st.isUp {
		st.isUp = true
		close(st.active)
		return
	}
	for _, s := range st.subs {
		s.wake()
	}
}

func (n *Notifier) deliver(st *channel, msg string) {
	n.stats.Messages.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	var woke int64
	switch {
	case strings.HasPrefix(msg, "w:"), strings.HasPrefix(msg, "g:"):
		f := strings.Fields(msg[2:])
		if len(f) == 0 {
			break
		}
		id, grant, next := f[0], "", ""
		if len(f) > 1 {
			next = f[len(f)-1]
		}
		if msg[0] == 'g' && len(f) > 2 {
			grant = strings.Join(f[1:len(f)-1], " ")
		}
		for _, s := range st.named[id] {
			if grant != "" {
				// Counted even when a nudge's signal is still pending, as
				// a wake-up is.
				if s.grant == "" && !s.woken {
					woke++
				}
				if s.grant != "" && id == core.ControlWaiter {
					// Control messages name holds taken over: the
					// subscriber takes them all (core.takenOver).
					s.grant += " " + grant
				} else {
					s.grant = grant
				}
				n.stats.Grants.Add(1)
				s.signal()
				continue
			}
			// Counted even when a nudge's signal is still pending: the
			// waiter is woken all the same (Take reports it).
			if !s.woken {
				woke++
			}
			s.woken = true
			s.signal()
		}
		if next == "*" {
			for _, s := range st.subs {
				s.nudged = true
				n.stats.Nudges.Add(1)
				s.signal()
			}
		} else if next != "-" {
			for nx := range strings.SplitSeq(next, ",") {
				if nx == id {
					continue
				}
				for _, s := range st.named[nx] {
					s.nudged = true
					n.stats.Nudges.Add(1)
					s.signal()
				}
			}
		}
	case strings.HasPrefix(msg, "n:"):
		k, err := strconv.ParseInt(msg[2:], 10, 64)
		if err != nil {
			k = int64(len(st.subs))
		}
		for _, s := range st.subs {
			if woke >= k {
				break
			}
			if s.wake() {
				woke++
			}
		}
	default:
		for _, s := range st.subs {
			if s.wake() {
				woke++
			}
		}
	}
	n.stats.Wakes.Add(woke)
}

// end closes st.ended, once; n.mu is held.
func (st *channel) end() {
	select {
	case <-st.ended:
	default:
		close(st.ended)
	}
}

// add registers s on the channel; n.mu is held.
func (st *channel) add(s *Sub) {
	st.subs = append(st.subs, s)
	if s.waiter != "" {
		if st.named == nil {
			st.named = map[string][]*Sub{}
		}
		st.named[s.waiter] = append(st.named[s.waiter], s)
	}
}

// remove unregisters s; n.mu is held.
func (st *channel) remove(s *Sub) {
	if i := slices.Index(st.subs, s); i >= 0 {
		st.subs = slices.Delete(st.subs, i, i+1)
	}
	if s.waiter == "" {
		return
	}
	named := st.named[s.waiter]
	if i := slices.Index(named, s); i >= 0 {
		named = slices.Delete(named, i, i+1)
	}
	if len(named) == 0 {
		delete(st.named, s.waiter)
	} else {
		st.named[s.waiter] = named
	}
}

// wake marks the waiter woken and signals it; false when it was woken
// already and has not taken that wake-up yet (it may have received the
// signal and be on its way to Take), or when a signal was already pending:
// a wake-up for one waiter ("n:<k>", one passed on) then goes to another,
// so that two back-to-back releases wake two waiters, not one twice
// (TestBackToBackReleasesWakeEveryWaiter). n.mu is held.
func (s *Sub) wake() bool {
	if s.woken {
		return false
	}
	s.woken = true
	return s.signal()
}

// signal signals the waiter; false when a signal was already pending.
func (s *Sub) signal() bool {
	select {
	case s.c <- struct{}{}:
		return true
	default:
		return false
	}
}

// Take returns, and forgets, what the signals received on C said: the data
// of a grant ("" when none), whether the waiter was woken to try again, and
// whether it was only nudged as the next in line.
func (s *Sub) Take() (grant string, woken, nudged bool) {
	s.n.mu.Lock()
	defer s.n.mu.Unlock()
	grant, woken, nudged = s.grant, s.woken, s.nudged
	s.grant, s.woken, s.nudged = "", false, false
	return grant, woken, nudged
}

// C receives a value when the waiter should try again.
func (s *Sub) C() <-chan struct{} { return s.c }

// Done is closed when no subscription of the waiter's channel can come back:
// the notifier was closed, or the rueidis client under it.
func (s *Sub) Done() <-chan struct{} { return s.ch.ended }

// Close removes the waiter. A wake-up it received but did not take (it
// stopped waiting first: it acquired during an attempt, or gave up) is passed
// on to the oldest other waiter, so that "n:<k>" wakes k waiters that still
// wait. The channel's subscription ends Linger after its last waiter left,
// unless another arrives.
func (s *Sub) Close() {
	n := s.n
	n.mu.Lock()
	defer n.mu.Unlock()
	st := s.ch
	st.remove(s)
	// A waiter that leaves without taking its wake-up (it gave up, or got
	// what it waited for another way) passes it on, so that a message that
	// woke only it ("n:1") still reaches a waiter that will try. A grant is
	// not passed on: the leaving waiter's own give-back hands it on (or it
	// holds by its own attempt); nor is a nudge.
	if s.woken {
		for _, o := range st.subs {
			if o.wake() {
				break
			}
		}
	}
	if len(st.subs) > 0 || st.closing || n.closed {
		return
	}
	if st.linger != nil {
		st.linger.Stop()
	}
	st.linger = time.AfterFunc(Linger, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if len(st.subs) == 0 && !st.closing && n.chans[st.name] == st {
			st.closing = true
			st.cancel()
		}
	})
}

// Close ends every subscription and waits for their goroutines.
func (n *Notifier) Close() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.closed = true
	for _, st := range n.chans {
		if st.linger != nil {
			st.linger.Stop()
		}
		st.closing = true
		st.end()
		st.cancel()
	}
	n.mu.Unlock()
	n.wg.Wait()
}
