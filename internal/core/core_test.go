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

// Every slot has a tag, and the tag's slot is that slot: a name's fencing
// counter lives in the name's slot. Redis's own CLUSTER KEYSLOT agrees
// (integration TestClusterFenceSharesSlot).
func TestSlotTags(t *testing.T) {
	for slot := range Slots {
		tag := SlotTag(slot)
		if tag == "" || Slot(tag) != slot {
			t.Fatalf("SlotTag(%d) = %q, whose slot is %d", slot, tag, Slot(tag))
		}
	}
	// Values from Redis Cluster's specification and CLUSTER KEYSLOT.
	for tag, slot := range map[string]int{"123456789": 0x31c3 & (Slots - 1), "foo": 12182, "bar": 5061, "orders": Slot("orders")} {
		if got := Slot(tag); got != slot {
			t.Errorf("Slot(%q) = %d, want %d", tag, got, slot)
		}
	}
	c := &Core{Config: Config{Prefix: "distsync:"}, Sharded: true}
	if got, want := c.FenceKey("foo"), "distsync:fence:{"+SlotTag(12182)+"}"; got != want {
		t.Errorf("FenceKey(foo) on a Cluster = %q, want %q", got, want)
	}
	if got := FenceOf(c.Key("foo", ""), true); got != c.FenceKey("foo") {
		t.Errorf("FenceOf = %q", got)
	}
	c.Sharded = false
	if got, want := c.FenceKey("foo"), "distsync:fence"; got != want {
		t.Errorf("FenceKey(foo) standalone = %q, want %q", got, want)
	}
}

func BenchmarkBuildTags(b *testing.B) {
	for range b.N {
		buildTags()
	}
}
