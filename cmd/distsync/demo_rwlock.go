package main

import (
	"context"
	"errors"
	"sync"
)

// demoRWCache: a cache entry guarded by a read-write lock; two readers read
// at once, a writer waits for them and updates the entry alone, and readers
// after it see the new value.
func demoRWCache(ctx context.Context, d *demoEnv) error {
	const name = "price-cache"
	var (
		mu    sync.Mutex
		price = "9.99" // the cached value, guarded by the read-write lock
	)
	read := func() string { mu.Lock(); defer mu.Unlock(); return price }
	rwA, err := d.a.RWLock(name)
	if err != nil {
		return err
	}
	rwB, err := d.b.RWLock(name)
	if err != nil {
		return err
	}
	r1, err := rwA.Read().Lock(ctx)
	if err != nil {
		return err
	}
	r2, err := rwB.Read().Lock(ctx)
	if err != nil {
		rwA.Read().Unlock(r1)
		return err
	}
	n, _ := rwA.Read().Holders(ctx)
	d.t.say("reader A", "reads price %s", read())
	d.t.say("reader B", "reads price %s at the same time (%d read holders)", read(), n)

	writer, err := d.client()
	if err != nil {
		return err
	}
	rwW, err := writer.RWLock(name)
	if err != nil {
		return err
	}
	wrote := make(chan error, 1)
	d.t.say("writer", "wants to update the price: waits for the readers")
	go func() {
		w, err := rwW.Write().Lock(ctx)
		if err != nil {
			wrote <- err
			return
		}
		mu.Lock()
		price = "11.49"
		mu.Unlock()
		d.t.say("writer", "holds the write lock alone, sets price 11.49")
		wrote <- rwW.Write().Unlock(w)
	}()
	if err := pause(ctx, d.lease/5); err != nil {
		return err
	}
	d.t.say("reader A", "done")
	d.t.say("reader B", "done")
	if err := errors.Join(rwA.Read().Unlock(r1), rwB.Read().Unlock(r2)); err != nil {
		return err
	}
	if err := <-wrote; err != nil {
		return err
	}
	r3, err := rwA.Read().Lock(ctx)
	if err != nil {
		return err
	}
	d.t.say("reader A", "reads price %s", read())
	return rwA.Read().Unlock(r3)
}
