package core

import (
	"slices"
	"testing"
)

func TestSubKeysAreThoseOfKey(t *testing.T) {
	c := &Core{Config: Config{Prefix: "distsync:"}}
	key := c.Key("orders", "")
	got := SubKeys(key, "", "fence", "done:a1", "")
	want := []string{key, c.Key("orders", "fence"), c.Key("orders", "done:a1"), key}
	if !slices.Equal(got, want) {
		t.Fatalf("SubKeys = %q, want %q", got, want)
	}
	if got := SubKeys(key); len(got) != 0 {
		t.Fatalf("SubKeys without suffixes = %q", got)
	}
}
