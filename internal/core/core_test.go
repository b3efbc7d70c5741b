package core

import (
	"slices"
	"strings"
	"testing"
	"unsafe"
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

// KeyWith's two keys are Key's, the key the start of the other's string.
func TestKeyWithIsKey(t *testing.T) {
	c := &Core{Config: Config{Prefix: "distsync:"}}
	for _, suffix := range []string{"ch:client/1", ""} {
		with, key := c.KeyWith("orders", suffix)
		if with != c.Key("orders", suffix) || key != c.Key("orders", "") {
			t.Fatalf("KeyWith(orders, %q) = %q, %q", suffix, with, key)
		}
		if unsafe.StringData(with) != unsafe.StringData(key) {
			t.Fatalf("KeyWith(orders, %q): the key is a string of its own", suffix)
		}
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
	// Off a Cluster, the handles of a Client share one string.
	c.Init()
	if a, b := c.FenceKey("foo"), c.FenceKey("bar"); a != "distsync:fence" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("FenceKey standalone after Init = %q and %q, two strings", a, b)
	}
}

func BenchmarkBuildTags(b *testing.B) {
	for range b.N {
		buildTags()
	}
}

// NewAcq's three names are the owner's full name, a fresh acquisition id
// and the two joined by ':', whatever the length of the Client's id.
func TestNewAcqNames(t *testing.T) {
	for _, id := range []string{"host/abc", strings.Repeat("x", 200)} {
		c := &Core{Config: Config{ID: id}}
		owner, acq, joined := c.NewAcq("7")
		if owner != id+":7" || joined != owner+":"+acq || !strings.HasPrefix(acq, acqPrefix) {
			t.Fatalf("NewAcq(7) on %q = %q, %q, %q", id, owner, acq, joined)
		}
		if _, next, _ := c.NewAcq("7"); next == acq {
			t.Fatalf("NewAcq gave %q twice", acq)
		}
	}
}

// ValidateName's shortcut for printable ASCII accepts exactly the names
// its full checks accept.
func TestValidateNameShortcut(t *testing.T) {
	names := []string{"", "orders", "a{b", "a}b", "ünïcode", strings.Repeat("n", MaxNameLen), strings.Repeat("n", MaxNameLen+1)}
	for b := range 256 {
		names = append(names, string(rune(b)), "x"+string([]byte{byte(b)}))
	}
	for _, name := range names {
		if got, want := ValidateName(name) == nil, validateName(name) == nil; got != want {
			t.Errorf("ValidateName(%q) accepts: %v; the full checks: %v", name, got, want)
		}
	}
}
