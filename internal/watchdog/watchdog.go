// Package watchdog renews every held lease of a Client from one goroutine.
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
// lease's deadline has passed, then reported lost.
package watchdog

import (
	"container/heap"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/core"
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
	batch    int // the most renewals in one round trip
	drift    time.Duration
	log      *slog.Logger
	ackN     int           // replicas that must acknowledge a renewal (0: none)
	ackWait  time.Duration // how long WAIT may take
	onBatch  func(Batch)

	mu      sync.Mutex
	queue   queue
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
}

// entry is a registered lease. Its instants are core.Mono's, 8 bytes each.
type entry struct {
	l        core.Lease
	due      time.Duration // when to renew next
	deadline time.Duration // when the lease may end, by this process's clock, less the drift
	idx      int           // position in queue, -1 when not queued
	removed  bool
}

// Drift is the safety margin by which the watchdog declares a lease lost
// before its deadline by this process's clock: lease/100 + 2 ms, for clock
// rate differences between this process and the server (as in Redlock).
func Drift(lease time.Duration) time.Duration { return core.Drift(lease) }

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
		drift:    Drift(lease),
		log:      log,
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

// Batch is one renewal batch: one pipelined round trip (with
// RequireReplicas, one per slot), and a second one when the server had to
// load the scripts again.
type Batch struct {
	// Leases is how many leases the batch renewed or tried to.
	Leases int
	// Latency is the time from sending the batch to its last reply.
	Latency time.Duration
	// Failed counts the renewals that did not extend their lease: failed on
	// the network or not acknowledged by the replicas (retried until the
	// lease's deadline), or found the lease gone (lost).
	Failed int
	// Lost counts the leases the batch reported lost.
	Lost int
	// ByKind splits Leases and Failed by the leases' kind, in the order
	// the kinds first appear in the batch.
	ByKind []KindCount
}

// KindCount is the part of a Batch of one kind of primitive.
type KindCount struct {
	Kind           string // a core.Kind constant
	Leases, Failed int
}

// count adds a lease of kind to b's ByKind, failed or not.
func (b *Batch) count(kind string, failed bool) {
	i := 0
	for i < len(b.ByKind) && b.ByKind[i].Kind != kind {
		i++
	}
	if i == len(b.ByKind) {
		b.ByKind = append(b.ByKind, KindCount{Kind: kind})
	}
	b.ByKind[i].Leases++
	if failed {
		b.ByKind[i].Failed++
	}
}

// OnBatch makes the watchdog call f after every renewal batch, on its
// goroutine and before it reports the batch's lost leases: f must be fast
// and must not block, or renewals wait for it. Call it before the first Add.
func (w *Watchdog) OnBatch(f func(Batch)) { w.onBatch = f }

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

// Lease is the lease every renewal extends to.
func (w *Watchdog) Lease() time.Duration { return w.lease }

// Stats returns the watchdog's counters.
func (w *Watchdog) Stats() *Stats { return &w.stats }

// Len returns how many leases are registered.
func (w *Watchdog) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue)
}

// Add registers lease l granted by a request sent at sentAt, for lease when
// that is shorter than the watchdog lease (a lock handed to a waiter: the
// first renewal is then due lease/3 after sentAt), else for the watchdog
// lease. The watchdog renews it with l.Renewal(), asked for at each
// renewal, until Remove, or until it is lost, when it calls l.Lost once
// with a cause that wraps core.ErrLeaseLost. On a closed watchdog Add
// returns an entry that is never renewed.
func (w *Watchdog) Add(l core.Lease, sentAt time.Time, lease time.Duration) core.Entry {
	sent := core.Mono(sentAt)
	due, deadline := sent+w.interval, sent+w.lease-w.drift
	if lease > 0 && lease < w.lease {
		due, deadline = sent+lease/3, sent+lease-Drift(lease)
	}
	e := &entry{l: l, due: due, deadline: deadline, idx: -1}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		e.removed = true
		return e
	}
	heap.Push(&w.queue, e)
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
	e.removed = true
	if e.idx >= 0 {
		heap.Remove(&w.queue, e.idx)
	}
	w.mu.Unlock()
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
	for _, e := range w.queue {
		e.removed = true
		e.idx = -1
	}
	w.queue = nil
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
	for {
		w.mu.Lock()
		now, wait := core.Mono(time.Now()), time.Hour
		if len(w.queue) > 0 {
			wait = w.queue[0].due - now
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
				continue
			case <-timer.C:
			}
		}
		w.tick()
	}
}

// tick renews every lease due now or within a tenth of an interval, so
// leases acquired close together share round trips.
func (w *Watchdog) tick() {
	start := time.Now()
	horizon := core.Mono(start) + w.interval/10
	var due []*entry
	w.mu.Lock()
	for len(w.queue) > 0 && w.queue[0].due <= horizon {
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
	// A renewal stuck on the network must not delay the report of a loss:
	// the batch gives up at its earliest deadline.
	start := time.Now()
	at := core.Mono(start)
	deadline := at + w.interval
	for _, e := range batch {
		deadline = min(deadline, e.deadline)
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

	var lost []func()
	now := time.Now()
	b := Batch{Leases: len(batch), Latency: now.Sub(sent)}
	sentAt, nowAt := core.Mono(sent), core.Mono(now)
	w.mu.Lock()
	for i, e := range batch {
		kind, _ := e.l.Kind()
		if e.removed {
			b.count(kind, false)
			continue
		}
		ok, err := res[i].AsInt64()
		err = core.ScriptError(err)
		if err == nil && ok == 1 && !acked[i] {
			err = fmt.Errorf("renewal not acknowledged by %d replicas in %v", w.ackN, w.ackWait)
		}
		var cause error
		failed := err != nil || ok != 1
		b.count(kind, failed)
		if failed {
			b.Failed++
			w.stats.Failed.Add(1)
		}
		switch {
		case err == nil && ok == 1:
			e.deadline = sentAt + w.lease - w.drift
			e.due = sentAt + w.interval
		case err == nil:
			cause = fmt.Errorf("%w: %s: gone or held by another owner", core.ErrLeaseLost, e.l.What())
		case nowAt < e.deadline:
			// Retry soon, but well before the deadline.
			e.due = nowAt + min(time.Second, (e.deadline-nowAt)/4)
			w.log.Debug("distsync: lease renewal failed, retrying", "lock", e.l.What(), "err", err)
		default:
			cause = fmt.Errorf("%w: %s: renewal failed until the lease ended: %v", core.ErrLeaseLost, e.l.What(), err)
		}
		if cause != nil {
			e.removed = true
			w.stats.Lost.Add(1)
			l, c := e.l, cause
			lost = append(lost, func() { l.Lost(c) })
			continue
		}
		if !w.closed {
			heap.Push(&w.queue, e)
		}
	}
	w.mu.Unlock()
	if w.onBatch != nil {
		b.Lost = len(lost)
		w.onBatch(b)
	}
	if len(lost) > 0 {
		// On a goroutine of their own: a callback that blocks must hold
		// up neither the renewal of other leases nor Close.
		w.calls.Add(1)
		go func() {
			defer w.calls.Done()
			for _, f := range lost {
				f()
			}
		}()
	}
}

// queue is a min-heap of entries by due time.
type queue []*entry

func (q queue) Len() int           { return len(q) }
func (q queue) Less(i, j int) bool { return q[i].due < q[j].due }
func (q queue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].idx = i
	q[j].idx = j
}
func (q *queue) Push(x any) {
	e := x.(*entry)
	e.idx = len(*q)
	*q = append(*q, e)
}
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	e.idx = -1
	return e
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
