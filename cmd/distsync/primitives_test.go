package main

import (
	"context"
	"encoding/json"
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
	assert.Regexp(t, `^[0-9a-z]{13,}\n$`, out)
	n, err := s.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the permit was not released")
}
