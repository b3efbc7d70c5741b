// Package renewal is a Client's lease watchdog: it renews every held lease
// of the Client from one goroutine.
//
// Each registered lease is renewed lease/3 after the request that last
// extended it was sent, so the schedule
// follows each lease's own deadline and a busy process does not drift past
// expiry. Leases that fall due together are renewed in pipelined batches
// (one DoMulti per batch), so many held leases cost a few round trips a tick,
// not one timer or one round trip each.
//
// A renewal that finds its lease gone or owned by someone else reports the lease
// lost at once. A renewal that fails on the network is retried until the
// lease's deadline.
//
// The deadline is a local timer, not a renewal's failure: each lease ends
// by this process's clock at the send of its last confirmed renewal plus the
// lease, less the drift and a safety margin for scheduling delay (a busy
// process runs a timer's goroutine late), and the watchdog ends it then,
// whatever its renewals are doing. The timer is one per watchdog, armed for
// the earliest deadline of an expiry heap beside the due heap: a lease costs
// a few words more and a heap fix per renewal, not a runtime timer of its
// own (and its goroutine at each firing), and leases that end together are
// ended in one pass. An acquisition's Err asks Lapsed, which ends a lease
// past its deadline at once, should the timer run late.
package renewal

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

// BatchSize is the most renewals sent in one pipelined round trip.
const BatchSize = 4096

// InFlight is how many batches of one tick are on the wire at once, so that
// the client builds and reads some while the server runs others.
const InFlight = 4

// Watchdog renews leases. Create it with New; it starts its goroutine with
// the first lease and stops it on Close.
type Watchdog struct {
	client   rueidis.Client
	lease    time.Duration
	interval time.Duration
	batch    int           // the most renewals in one round trip
	margin   time.Duration // the safety margin (SetMargin), at most a quarter of a lease
	log      *slog.Logger
	ackN     int           // replicas that must acknowledge a renewal (0: none)
	ackWait  time.Duration // how long WAIT may take
	onBatch  func(observe.RenewInfo)

	endMu   sync.Mutex // held from finding leases lost to ending them (lapse)
	mu      sync.Mutex
	queue   entries       // by due
	expiry  entries       // by deadline: every registered lease, in flight or not
	timer   *time.Timer   // ends the leases of expiry at their deadlines
	timerAt time.Duration // when timer fires (core.Mono); 0: stopped
	started bool
	closed  bool
	armed   time.Duration // when run next looks at the queue by itself (core.Mono)
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	calls   sync.WaitGroup // goroutines calling Lost

	stats Stats
}

// Stats counts the watchdog's work, for benchmarks and tests.
type Stats struct {
	Ticks      atomic.Int64 // passes that renewed at least one lease
	Renewals   atomic.Int64 // renewal scripts sent
	RoundTrips atomic.Int64 // pipelined batches sent
	Lost       atomic.Int64 // leases reported lost
	Failed     atomic.Int64 // renewals that did not extend their lease
	LastTick   atomic.Int64 // duration of the last pass, in nanoseconds
	Wakes      atomic.Int64 // Adds that woke the renewing goroutine early
}

// entry is a registered lease. Its instants are core.Mono's, 8 bytes each;
// it is 64 bytes, one size class of the allocator, which a field more would
// raise to 80.
type entry struct {
	l     core.Lease
	due   time.Duration // when to renew next
	lease time.Duration // what each renewal extends it to; 0: the watchdog lease
	// until is when the lease ends, by this process's clock, less the drift
	// and the margin (deadline), written under w.mu and read by Lapsed
	// without it; MaxInt64 once released.
	until   atomic.Int64
	idx     int32 // position in queue, -1 when not queued
	xidx    int32 // position in expiry, -1 when not there
	removed bool
	w       *Watchdog
}

// deadline is when e ends, by this process's clock (until): its key in the
// expiry heap while it is there.
func (e *entry) deadline() time.Duration { return time.Duration(e.until.Load()) }

// term returns what each renewal extends e to and how long after its send
// e is renewed again.
func (e *entry) term() (lease, interval time.Duration) {
	if e.lease == 0 {
		return e.w.lease, e.w.interval
	}
	return e.lease, e.lease / 3
}

// Drift is the margin by which the watchdog ends a lease before its end by
// this process's clock, for clock rate differences between this process and
// the server (as in Redlock): lease/100 + 2 ms. The safety margin comes on
// top of it.
func Drift(lease time.Duration) time.Duration { return core.Drift(lease) }

// DefaultMargin is the safety margin when SetMargin is not called.
const DefaultMargin = 100 * time.Millisecond // watchdog.DefaultSafetyMargin

// New returns a watchdog that gives leases of lease and renews them every lease/3.
func New(c rueidis.Client, lease time.Duration, log *slog.Logger) *Watchdog {
	if log == nil {
		log = slog.Default()
	}
	return &Watchdog{
		client:   c,
		lease:    lease,
		interval: lease / 3,
		batch:    BatchSize,
		margin:   DefaultMargin,
		log:      log,
		expiry:   entries{byDeadline: true},
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// RequireReplicas makes a renewal count only once n replicas acknowledged it
// (WAIT, at most timeout, on the connection that sent it): an unacknowledged
// renewal is treated like one that failed on the network, retried until the
// lease's deadline, so a holder never believes in a lease that a promoted
// replica would not have. Call it before the first Add.
func (w *Watchdog) RequireReplicas(n int, timeout time.Duration) {
	w.ackN, w.ackWait = n, timeout
}

// count adds a lease of kind to b's ByKind, failed or not.
func count(b *observe.RenewInfo, kind observe.Kind, failed bool) {
	i := 0
	for i < len(b.ByKind) && b.ByKind[i].Kind != kind {
		i++
	}
	if i == len(b.ByKind) {
		b.ByKind = append(b.ByKind, observe.RenewKind{Kind: kind})
	}
	b.ByKind[i].Leases++
	if failed {
		b.ByKind[i].Failed++
	}
}

// OnBatch makes the watchdog call f after every renewal batch (one
// pipelined round trip; with RequireReplicas, one per slot), on its
// goroutine and before it reports the batch's lost leases: f must be fast
// and must not block, or renewals wait for it. Call it before the first Add.
func (w *Watchdog) OnBatch(f func(observe.RenewInfo)) { w.onBatch = f }

// Tune sets the renewal interval (default lease/3) and the batch size
// (default BatchSize); values <= 0 keep the defaults. Call it before the
// first Add.
func (w *Watchdog) Tune(interval time.Duration, batch int) {
	if interval > 0 {
		w.interval = interval
	}
	if batch > 0 {
		w.batch = batch
	}
}

// SetMargin sets the safety margin (default DefaultMargin): a lease ends by
// this process's clock the drift and min(d, lease/4) before the send of its
// last confirmed renewal plus the lease, so that a timer that fires late in
// a busy process still ends it before the server does. Call it before the
// first Add.
func (w *Watchdog) SetMargin(d time.Duration) { w.margin = d }

// Trust is how long after the send of a request that granted or extended
// a lease of lease its holder trusts it: the lease less the drift and the
// safety margin.
func (w *Watchdog) Trust(lease time.Duration) time.Duration {
	return lease - Drift(lease) - min(w.margin, lease/4)
}

// Lease is the lease every renewal extends to.
func (w *Watchdog) Lease() time.Duration { return w.lease }

// Stats returns the watchdog's counters.
func (w *Watchdog) Stats() *Stats { return &w.stats }

// Len returns how many leases are registered.
func (w *Watchdog) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue.es)
}

// Add registers lease l granted by a request sent at sentAt. Each renewal
// extends it to lease (0: the watchdog lease; another lease is renewed
// every lease/3 instead of at the watchdog's interval); it was granted for
// first when that is shorter (a lock handed to a waiter: the first renewal
// is then due first/3 after sentAt). The watchdog renews it with
// l.Renewal(), asked for at each renewal, until Remove, or until it is
// lost, when it calls l.Lost once with a cause that wraps
// core.ErrLeaseLost. On a closed watchdog Add returns an entry that is
// never renewed.
//
// Whatever its renewals do, the lease is lost when its deadline passes by
// this process's clock: the send of the request that last extended it, plus
// the lease, less the drift and the safety margin (SetMargin). The watchdog
// then calls l.Lost from its expiry timer.
func (w *Watchdog) Add(l core.Lease, sentAt time.Time, lease, first time.Duration) core.Entry {
	if lease == w.lease {
		lease = 0
	}
	e := &entry{l: l, lease: lease, idx: -1, xidx: -1, w: w}
	sent := core.Mono(sentAt)
	full, interval := e.term()
	due, deadline := sent+interval, sent+w.Trust(full)
	if first > 0 && first < full {
		due, deadline = sent+first/3, sent+w.Trust(first)
	}
	e.due = due
	e.until.Store(int64(deadline))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		e.removed = true
		return e
	}
	heap.Push(&w.queue, e)
	heap.Push(&w.expiry, e)
	w.armExpiry()
	if !w.started {
		w.started = true
		go w.run()
	}
	// Wake run only if it would otherwise look too late: leases are mostly
	// added in due order, so a lock+unlock costs no goroutine wake-up.
	if e.idx == 0 && e.due < w.armed {
		w.armed = e.due
		select {
		case w.wake <- struct{}{}:
			w.stats.Wakes.Add(1)
		default:
		}
	}
	return e
}

// Remove unregisters a lease. After Remove returns the watchdog sends no
// further renewal for it and never reports it lost. A renewal already on the
// wire cannot resurrect a released lease: renewal scripts check the owner.
func (w *Watchdog) Remove(ce core.Entry) {
	e, ok := ce.(*entry)
	if !ok || e == nil {
		return
	}
	w.mu.Lock()
	w.drop(e)
	e.until.Store(math.MaxInt64)
	w.mu.Unlock()
}

// drop unregisters e; w.mu is held. The expiry timer is left as it is:
// firing early, it only arms itself again.
func (w *Watchdog) drop(e *entry) {
	e.removed = true
	if e.idx >= 0 {
		heap.Remove(&w.queue, int(e.idx))
	}
	if e.xidx >= 0 {
		heap.Remove(&w.expiry, int(e.xidx))
	}
}

// armExpiry arms the expiry timer for the earliest deadline, unless it
// fires before that already; w.mu is held.
func (w *Watchdog) armExpiry() {
	first := w.expiry.first()
	if first == nil || w.closed {
		return
	}
	at := first.deadline()
	if w.timerAt != 0 && w.timerAt <= at {
		return
	}
	w.timerAt = at
	d := at - core.Mono(time.Now())
	if w.timer == nil {
		w.timer = time.AfterFunc(d, w.expire)
	} else {
		w.timer.Reset(d)
	}
}

// expire is the expiry timer's callback: it ends every lease whose
// deadline has passed, then reports them (on this goroutine of its own: the
// timer's next firing runs on another).
func (w *Watchdog) expire() {
	if reports := w.lapse(true); reports != nil {
		defer w.calls.Done()
		for _, f := range reports {
			f()
		}
	}
}

// lapse ends every lease whose deadline has passed, at once, and returns
// what reports them; when it returns any, w.calls counts them (the caller
// runs them, then calls w.calls.Done). timer says the expiry timer fired.
// endMu is held across finding the leases and ending them, so that Lapsed,
// which takes it too, returns only once its lease has ended.
func (w *Watchdog) lapse(timer bool) []func() {
	w.endMu.Lock()
	defer w.endMu.Unlock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	if timer {
		w.timerAt = 0
	}
	now := core.Mono(time.Now())
	var lost []lostLease
	for e := w.expiry.first(); e != nil && e.deadline() <= now; e = w.expiry.first() {
		w.drop(e)
		w.stats.Lost.Add(1)
		lost = append(lost, lostLease{e.l, fmt.Errorf("%w: %s: the lease ran out: no renewal was confirmed in time", core.ErrLeaseLost, e.l.What())})
	}
	w.armExpiry()
	if len(lost) > 0 {
		w.calls.Add(1)
	}
	w.mu.Unlock()
	reports := endLost(lost)
	if len(lost) > 0 && len(reports) == 0 {
		w.calls.Done()
	}
	return reports
}

// Lapsed reports whether e's deadline has passed by this process's clock.
// When it has, e is ended before Lapsed returns (with every other lease
// past its deadline), as the expiry timer would, which a busy process may
// run late; their reports run on a goroutine of their own. Before the
// deadline it costs a clock read and an atomic load.
func (e *entry) Lapsed() bool {
	if core.Mono(time.Now()) < time.Duration(e.until.Load()) {
		return false
	}
	w := e.w
	if reports := w.lapse(false); reports != nil {
		go func() {
			defer w.calls.Done()
			for _, f := range reports {
				f()
			}
		}()
	}
	return true
}

// lostLease is a lease found lost, and why.
type lostLease struct {
	l     core.Lease
	cause error
}

// endLost ends every lost lease (their contexts are cancelled when it returns)
// and returns what reports them: the ends come first, all of them, and the
// reports (logs, observers) after.
func endLost(lost []lostLease) []func() {
	var reports []func()
	for _, l := range lost {
		if f := l.l.Lost(l.cause); f != nil {
			reports = append(reports, f)
		}
	}
	return reports
}

// Close stops the watchdog's goroutine and waits for it, and for Lost
// callbacks in progress at most core.CloseGrace: one that blocks longer is
// left running. Registered leases are no longer renewed; they expire on the
// server by themselves.
func (w *Watchdog) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	started := w.started
	for _, e := range w.expiry.es {
		e.removed = true
		e.idx, e.xidx = -1, -1
	}
	w.queue.es, w.expiry.es = nil, nil
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	close(w.stop)
	if started {
		<-w.done
	}
	idle := make(chan struct{})
	go func() { w.calls.Wait(); close(idle) }()
	t := time.NewTimer(core.CloseGrace)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		w.log.Warn("distsync: a lost-lease callback has not returned; the watchdog's Close does not wait for it")
	}
}

func (w *Watchdog) run() {
	defer close(w.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	idle := false // the timer ran out with nothing to renew
	for {
		w.mu.Lock()
		now, wait := core.Mono(time.Now()), time.Hour
		if e := w.queue.first(); e != nil {
			wait, idle = e.due-now, false
		} else if !idle {
			// Leases come and go (a lock and its unlock take less than this
			// loop's wake-up, so it often finds them gone): look again about
			// when the next one added would be due, a tenth of an interval
			// early for requests still on the wire, so that adding it wakes
			// nobody (Add). Once that finds nothing, sleep until an Add.
			wait = max(w.interval-w.interval/10, idleLook)
		}
		w.armed = now + wait
		w.mu.Unlock()
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-w.stop:
				return
			case <-w.wake:
				if !timer.Stop() {
					<-timer.C
				}
				idle = false
				continue
			case <-timer.C:
				idle = true
			}
		}
		w.tick()
	}
}

// idleLook is the shortest of run's looks for leases to come when there
// are none: with a short interval, looking that often would cost more
// than the wake-ups it saves.
const idleLook = time.Second

// tick renews every lease due now or within a tenth of an interval, so
// leases acquired close together share round trips.
func (w *Watchdog) tick() {
	start := time.Now()
	horizon := core.Mono(start) + w.interval/10
	var due []*entry
	w.mu.Lock()
	for e := w.queue.first(); e != nil && e.due <= horizon; e = w.queue.first() {
		due = append(due, heap.Pop(&w.queue).(*entry))
	}
	w.mu.Unlock()
	if len(due) <= w.batch {
		w.renew(due)
	} else {
		// The batches of a large tick overlap: the client builds and
		// reads some while the server runs others (on one connection,
		// pipelined, in order).
		var wg sync.WaitGroup
		slots := make(chan struct{}, InFlight)
		for len(due) > 0 {
			n := min(len(due), w.batch)
			batch := due[:n]
			due = due[n:]
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.renew(batch)
				<-slots
			}()
		}
		wg.Wait()
	}
	w.stats.Ticks.Add(1)
	w.stats.LastTick.Store(int64(time.Since(start)))
}

func (w *Watchdog) renew(batch []*entry) {
	// The batch gives up at its earliest deadline, when the expiry timer
	// ends that lease anyway, so that a renewal stuck on the network does
	// not hold up the retries of the others.
	start := time.Now()
	at := core.Mono(start)
	deadline := at + w.interval
	for _, e := range batch {
		deadline = min(deadline, e.deadline()) // a released one's is MaxInt64
	}
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(deadline-at))
	defer cancel()
	rs := make([]core.Renewal, len(batch))
	cmds := make(rueidis.Commands, len(batch))
	for i, e := range batch {
		rs[i] = e.l.Renewal()
		cmds[i] = rs[i].Script.EvalSHA(w.client, rs[i].Keys, rs[i].Args)
	}
	sent := time.Now()
	res, acked := w.send(ctx, cmds)
	w.stats.Renewals.Add(int64(len(batch)))

	// Scripts missing from the server's cache (a restart, SCRIPT FLUSH) are
	// loaded once on every node (SCRIPT LOAD) and the renewals sent again by
	// SHA; only if loading fails is each sent with its source.
	var again []int
	missing := map[*core.Script]bool{}
	for i, r := range res {
		if core.IsNoScript(r.Error()) {
			again = append(again, i)
			missing[rs[i].Script] = true
		}
	}
	if len(again) > 0 {
		loaded := true
		for sc := range missing {
			if err := sc.Load(ctx, w.client); err != nil {
				loaded = false
			}
		}
		cmds = cmds[:0]
		for _, i := range again {
			r := rs[i]
			if loaded {
				cmds = append(cmds, r.Script.EvalSHA(w.client, r.Keys, r.Args))
			} else {
				cmds = append(cmds, r.Script.Eval(w.client, r.Keys, r.Args))
			}
		}
		res2, acked2 := w.send(ctx, cmds)
		for j, r := range res2 {
			res[again[j]], acked[again[j]] = r, acked2[j]
		}
	}

	var lost []lostLease
	now := time.Now()
	b := observe.RenewInfo{Leases: len(batch), Latency: now.Sub(sent)}
	sentAt, nowAt := core.Mono(sent), core.Mono(now)
	w.endMu.Lock() // see lapse
	w.mu.Lock()
	for i, e := range batch {
		kind, _ := e.l.Kind()
		if e.removed {
			count(&b, kind, false)
			continue
		}
		ok, err := res[i].AsInt64()
		err = core.ScriptError(err)
		if err == nil && ok == 1 && !acked[i] {
			err = fmt.Errorf("renewal not acknowledged by %d replicas in %v", w.ackN, w.ackWait)
		}
		var cause error
		failed := err != nil || ok != 1
		count(&b, kind, failed)
		if failed {
			b.Failed++
			w.stats.Failed.Add(1)
		}
		switch {
		case err == nil && ok == 1:
			// The script checked the owner: the lease lasted from its
			// last confirmation to this one, and is trusted from this send.
			lease, interval := e.term()
			e.until.Store(int64(sentAt + w.Trust(lease)))
			e.due = sentAt + interval
			heap.Fix(&w.expiry, int(e.xidx))
		case nowAt >= e.deadline():
			// The expiry timer has not run yet (a busy process).
			cause = fmt.Errorf("%w: %s: the lease ran out: no renewal was confirmed in time (the last attempt: %v)", core.ErrLeaseLost, e.l.What(), orGone(err))
		case err == nil:
			cause = fmt.Errorf("%w: %s: the server no longer holds it for this owner (deleted, or taken over)", core.ErrLeaseLost, e.l.What())
		default:
			// Retry soon, but well before the deadline.
			e.due = nowAt + min(time.Second, (e.deadline()-nowAt)/4)
			w.log.Debug("distsync: lease renewal failed, retrying", "lock", e.l.What(), "err", err)
		}
		if cause != nil {
			w.drop(e)
			w.stats.Lost.Add(1)
			lost = append(lost, lostLease{e.l, cause})
			continue
		}
		if !w.closed {
			heap.Push(&w.queue, e)
		}
	}
	w.armExpiry()
	w.mu.Unlock()
	reports := endLost(lost)
	w.endMu.Unlock()
	if w.onBatch != nil {
		b.Lost = len(lost)
		w.onBatch(b)
	}
	if len(reports) > 0 {
		// On a goroutine of their own: a report that blocks (an
		// observer) must hold up neither the renewal of other leases nor
		// Close.
		w.calls.Add(1)
		go func() {
			defer w.calls.Done()
			for _, f := range reports {
				f()
			}
		}()
	}
}

// orGone words a renewal's outcome that did not extend its lease.
func orGone(err error) error {
	if err == nil {
		return errGone
	}
	return err
}

var errGone = errors.New("the server no longer holds it for this owner")

// entries is a min-heap of entries by due time (the renewal queue) or, with
// byDeadline, by deadline (the expiry heap). An entry keeps its position in
// each: idx and xidx, -1 when it is not there.
type entries struct {
	es         []*entry
	byDeadline bool
}

// key returns e's instant in q and where e keeps its position in q.
func (q *entries) key(e *entry) (time.Duration, *int32) {
	if q.byDeadline {
		return e.deadline(), &e.xidx
	}
	return e.due, &e.idx
}

func (q *entries) Len() int { return len(q.es) }
func (q *entries) Less(i, j int) bool {
	a, _ := q.key(q.es[i])
	b, _ := q.key(q.es[j])
	return a < b
}
func (q *entries) Swap(i, j int) {
	q.es[i], q.es[j] = q.es[j], q.es[i]
	_, pi := q.key(q.es[i])
	_, pj := q.key(q.es[j])
	*pi, *pj = int32(i), int32(j)
}
func (q *entries) Push(x any) {
	e := x.(*entry)
	_, p := q.key(e)
	*p = int32(len(q.es))
	q.es = append(q.es, e)
}
func (q *entries) Pop() any {
	n := len(q.es) - 1
	e := q.es[n]
	q.es[n] = nil
	q.es = q.es[:n]
	_, p := q.key(e)
	*p = -1
	return e
}

// first returns the heap's first entry, nil when it is empty.
func (q *entries) first() *entry {
	if len(q.es) == 0 {
		return nil
	}
	return q.es[0]
}

// send sends cmds in one pipelined round trip and reports, per command,
// whether enough replicas acknowledged it. With RequireReplicas, commands of
// one slot go on a dedicated connection followed by WAIT, so WAIT covers
// exactly their writes (one round trip per slot in the batch on Cluster).
func (w *Watchdog) send(ctx context.Context, cmds rueidis.Commands) ([]rueidis.RedisResult, []bool) {
	acked := make([]bool, len(cmds))
	if w.ackN <= 0 {
		for i := range acked {
			acked[i] = true
		}
		w.stats.RoundTrips.Add(1)
		return w.client.DoMulti(ctx, cmds...), acked
	}
	// WAIT must answer before the batch's deadline, or the scripts' own
	// replies (NOSCRIPT among them) would be lost with it.
	wait := w.ackWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d)*3/4)
	}
	res := make([]rueidis.RedisResult, len(cmds))
	groups := map[uint16][]int{}
	for i, c := range cmds {
		groups[c.Slot()] = append(groups[c.Slot()], i)
	}
	for _, idx := range groups {
		w.stats.RoundTrips.Add(1)
		err := w.client.Dedicated(func(d rueidis.DedicatedClient) error {
			group := make(rueidis.Commands, 0, len(idx)+1)
			for _, i := range idx {
				group = append(group, cmds[i])
			}
			group = append(group, d.B().Wait().Numreplicas(int64(w.ackN)).Timeout(max(wait.Milliseconds(), 1)).Build())
			rs := d.DoMulti(ctx, group...)
			n, err := rs[len(idx)].AsInt64()
			for j, i := range idx {
				res[i], acked[i] = rs[j], err == nil && n >= int64(w.ackN)
			}
			return nil
		})
		if err != nil {
			for _, i := range idx {
				res[i] = rueidis.NewErrorResult(err)
			}
		}
	}
	return res, acked
}
