package core

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/redistest"
)

var tellScript = NewScript(`ds_tell('PUBLISH', KEYS[1], ARGV[1], ARGV[2], ARGV[3]) return 1`)

// ds_tell publishes msg on the channel of waiter id's Client only (channel
// .. ':' .. the part of id before its first ':'), then, when next waits in
// another Client, 'w:- <next>' on that Client's channel; nothing more.
func TestTellNudgesNextOfAnotherClientOnly(t *testing.T) {
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, "the embedded server delivers nothing to this pattern subscription")
	c, rc := testCore(t, s)
	ctx := context.Background()
	ch := "tell:{" + t.Name() + "}"
	got := make(chan [2]string, 16)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go rc.Receive(sctx, rc.B().Psubscribe().Pattern(ch+":*").Build(), func(m rueidis.PubSubMessage) {
		got <- [2]string{m.Channel, m.Message}
	})
	// The subscription is up once a message published after it arrives.
	up := time.Now().Add(10 * time.Second)
	for subbed := false; !subbed; {
		if time.Now().After(up) {
			t.Fatal("the pattern subscription never saw a message")
		}
		rc.Do(ctx, rc.B().Publish().Channel(ch+":probe").Message("probe").Build())
		select {
		case m := <-got:
			subbed = m[1] == "probe"
		case <-time.After(5 * time.Millisecond):
		}
	}
	for _, tc := range []struct {
		name, id, next string
		want           [][2]string
	}{
		{"no next", "c1:o:a", "-", [][2]string{{ch + ":c1", "m"}}},
		{"next in the same Client", "c1:o:a", "c1:p:b", [][2]string{{ch + ":c1", "m"}}},
		{"next in another Client", "c1:o:a", "c2:p:b", [][2]string{{ch + ":c1", "m"}, {ch + ":c2", "w:- c2:p:b"}}},
		{"no owner part", "c1", "c2", [][2]string{{ch + ":c1", "m"}, {ch + ":c2", "w:- c2"}}},
	} {
		if err := c.Eval(ctx, tellScript, []string{ch}, []string{tc.id, tc.next, "m"}).Error(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// A message published last marks the end of the script's.
		rc.Do(ctx, rc.B().Publish().Channel(ch+":end").Message("end").Build())
		var msgs [][2]string
		for m := range got {
			if m[1] == "end" {
				break
			}
			if m[1] != "probe" { // one published before the subscription was seen up
				msgs = append(msgs, m)
			}
		}
		if len(msgs) != len(tc.want) {
			t.Errorf("%s: published %q, want %q", tc.name, msgs, tc.want)
			continue
		}
		for i := range msgs {
			if msgs[i] != tc.want[i] {
				t.Errorf("%s: published %q, want %q", tc.name, msgs, tc.want)
				break
			}
		}
	}
}
