package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// inspectJSON runs inspect --json in process and decodes its report.
func inspectJSON(t *testing.T, args ...string) report {
	t.Helper()
	code, out, errOut := invoke(t, "", append([]string{"inspect", "--json"}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	var r report
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	return r
}

func TestInspectRWLock(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	rw, err := c.RWLock(name)
	require.NoError(t, err)
	ctx := context.Background()
	r1, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	r2, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	r := inspectJSON(t, name)
	assert.Equal(t, distsync.KindRWLock, r.Kind)
	assert.Equal(t, "read", r.Mode)
	require.Len(t, r.Owners, 2)
	for _, o := range r.Owners {
		assert.Equal(t, "read", o.Mode)
		assert.Equal(t, c.ID(), o.Client)
		assert.Positive(t, o.Token)
		assert.Positive(t, o.TTLMs)
	}
	require.NoError(t, rw.Read().Unlock(r1))
	require.NoError(t, rw.Read().Unlock(r2))

	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	r = inspectJSON(t, name)
	assert.Equal(t, "write", r.Mode)
	require.Len(t, r.Owners, 1)
	code, out, errOut := invoke(t, "", "unlock", "--force", "--yes", name)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "deleted")
	assert.False(t, inspectJSON(t, name).Held)
	assert.ErrorIs(t, rw.Write().Unlock(w), distsync.ErrNotHeld)
}

func TestInspectFairLock(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	f, err := c.FairLock(name)
	require.NoError(t, err)
	ctx := context.Background()
	held, err := f.Lock(ctx)
	require.NoError(t, err)
	defer f.Unlock(held)
	waitCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := f.Lock(waitCtx); done <- err }()
	require.Eventually(t, func() bool { n, err := f.Waiting(ctx); return err == nil && n == 1 }, 10*time.Second, time.Millisecond)
	r := inspectJSON(t, name)
	assert.Equal(t, distsync.KindFairLock, r.Kind)
	assert.True(t, r.Held)
	require.Len(t, r.Owners, 1)
	require.Len(t, r.Waiters, 1)
	stop()
	assert.ErrorIs(t, <-done, context.Canceled)
}

func TestInspectSemaphoreAndLatch(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	sname, lname := dstest.Name(t)+"-sem", dstest.Name(t)+"-latch"
	s, err := c.PermitSemaphore(sname)
	require.NoError(t, err)
	defer s.Delete(ctx)
	_, err = s.TrySetPermits(ctx, 3)
	require.NoError(t, err)
	p, err := s.TryAcquire(ctx, 0, 0)
	require.NoError(t, err)
	r := inspectJSON(t, sname)
	assert.Equal(t, distsync.KindPermitSemaphore, r.Kind)
	require.NotNil(t, r.Permits)
	assert.Equal(t, permits{Available: 2, Held: 1}, *r.Permits)
	require.Len(t, r.Owners, 1)
	assert.Equal(t, p.ID(), r.Owners[0].ID)
	require.NoError(t, s.Release(ctx, p))

	l, err := c.Latch(lname)
	require.NoError(t, err)
	defer l.Delete(ctx)
	_, err = l.TrySetCount(ctx, 2)
	require.NoError(t, err)
	// The latch carries its kind: inspect knows it without --kind.
	r = inspectJSON(t, lname)
	assert.Equal(t, distsync.KindLatch, r.Kind)
	require.NotNil(t, r.Count)
	assert.Equal(t, int64(2), *r.Count)
	assert.True(t, r.Held)
}

func TestRunSemaphore(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	c := dstest.Client(t)
	s, err := c.PermitSemaphore(name)
	require.NoError(t, err)
	ctx := context.Background()
	defer s.Delete(ctx)
	_, err = s.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	p, err := s.TryAcquire(ctx, 0, 0)
	require.NoError(t, err)
	code, _, errOut := invoke(t, "", "run", "--semaphore", name, "--permits", "1", "--wait", "0", "--", "true")
	assert.Equal(t, exitNotAcquired, code, errOut)
	require.NoError(t, s.Release(ctx, p))
	code, out, errOut := invoke(t, "", "run", "--semaphore", name, "--permits", "1", "--", "sh", "-c", "echo $"+envPermitID)
	assert.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `^[^\s:]+:[0-9a-z]{13,}\n$`, out, "the Client id, then the id proper")
	n, err := s.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the permit was not released")
}

// An election: inspect shows its leader and candidates, list lists it,
// delete refuses it, and unlock --force deposes the leader, which hears of
// it at once, and the head candidate leads.
func TestInspectElection(t *testing.T) {
	t.Parallel()
	c, other := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	ctx := context.Background()
	e, err := c.Election(name)
	require.NoError(t, err)
	lead, term, err := e.Campaign(ctx, "v1")
	require.NoError(t, err)
	defer e.Resign(lead)
	eo, err := other.Election(name)
	require.NoError(t, err)
	type won struct {
		lead context.Context
		term int64
		err  error
	}
	campaigned := make(chan won, 1)
	go func() { l, tm, err := eo.Campaign(ctx, "v2"); campaigned <- won{l, tm, err} }()
	require.Eventually(t, func() bool { n, err := e.Candidates(ctx); return err == nil && n == 1 }, 10*time.Second, time.Millisecond)

	r := inspectJSON(t, name)
	assert.Equal(t, distsync.KindElection, r.Kind)
	assert.True(t, r.Held)
	assert.Equal(t, term, r.Token)
	assert.Positive(t, r.TTLMs)
	require.Len(t, r.Owners, 1)
	assert.Equal(t, c.ID(), r.Owners[0].Client)
	require.NotNil(t, r.Leader)
	assert.Equal(t, "v1", r.Leader.Value)
	assert.Equal(t, term, r.Leader.Term)
	assert.WithinDuration(t, time.Now(), r.Leader.Since, time.Minute)
	require.Len(t, r.Waiters, 1)
	assert.True(t, strings.HasPrefix(r.Waiters[0].ID, other.ID()+":"), r.Waiters[0].ID)

	code, out, errOut := invoke(t, "", "inspect", name)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `election "`+name+`": led`)
	assert.Contains(t, out, fmt.Sprintf("  term       %d\n", term))
	assert.Contains(t, out, `  value      "v1"`)
	assert.Contains(t, out, "  leader     "+r.Owners[0].ID+"  holds 1")
	assert.Contains(t, out, "  candidates 1. "+r.Waiters[0].ID)

	code, out, errOut = invoke(t, "", "list", name)
	require.Equal(t, exitOK, code, errOut)
	assert.Empty(t, errOut)
	assert.Regexp(t, `\n`+name+` +election +1 +1 +[0-9.]+m?s\n$`, out)

	code, _, errOut = invoke(t, "", "delete", "--yes", name)
	assert.Equal(t, exitState, code, errOut)
	assert.Contains(t, errOut, "an election's leader is deposed with distsync unlock --force")
	code, _, errOut = invoke(t, "", "delete", "--kind", "election", name)
	assert.Equal(t, exitUsage, code, errOut)

	code, out, errOut = invoke(t, "", "unlock", "--force", name) // not confirmed
	assert.Equal(t, exitFailure, code, errOut)
	assert.Contains(t, out, "Depose the leader of election")
	require.NoError(t, lead.Err())

	code, out, errOut = invoke(t, "", "unlock", "--force", "--yes", name)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "its leader was deposed")
	select {
	case <-lead.Done():
		assert.ErrorIs(t, context.Cause(lead), distsync.ErrLeaseLost)
	case <-time.After(10 * time.Second): // the lease is longer: push, not renewal
		t.Fatal("the deposed leader was not told")
	}
	w := <-campaigned
	require.NoError(t, w.err, "the candidate leads")
	assert.Greater(t, w.term, term)
	r = inspectJSON(t, name)
	require.NotNil(t, r.Leader)
	assert.Equal(t, "v2", r.Leader.Value)
	assert.Equal(t, other.ID(), r.Owners[0].Client)

	require.NoError(t, eo.Resign(w.lead))
	code, out, errOut = invoke(t, "", "unlock", "--force", "--yes", name)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "is not held; nothing to do", "nobody leads or campaigns: nothing is stored")

	// Candidates while nobody leads (the instant between a resign and the
	// head's election), as the election's scripts keep them.
	vacant := name + "-vacant"
	key := "distsync:{" + vacant + "}"
	rc := c.Rueidis()
	t.Cleanup(func() { rc.Do(ctx, rc.B().Del().Key(key+":cands", key+":wins").Build()) })
	require.NoError(t, rc.Do(ctx, rc.B().Rpush().Key(key+":cands").Element("cand").Build()).Error())
	end := float64(time.Now().Add(time.Minute).UnixMilli())
	require.NoError(t, rc.Do(ctx, rc.B().Zadd().Key(key+":wins").ScoreMember().ScoreMember(end, "cand").Build()).Error())
	code, out, errOut = invoke(t, "", "inspect", vacant)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `election "`+vacant+`": nobody leads`)
	assert.Contains(t, out, "  candidates 1. cand")
	code, out, errOut = invoke(t, "", "unlock", "--force", "--yes", vacant)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "nobody leads")
}
