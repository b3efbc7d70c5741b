package core

import (
	"strings"
	"sync"
)

// Fencing tokens come from one counter per Cluster hash slot, not one per
// name. A script may touch any key of its name's slot, so each of the
// 16 384 slots gets a short tag whose own slot it is (SlotTag), and the
// counter of a name is the key of its slot's tag (Core.FenceKey). Every name
// of a slot shares the counter; the counter only grows, so each name's
// tokens strictly increase, and it never has to lapse: its memory is bounded
// by the slots (at most 16 384 keys of ~80 bytes), not by the names ever
// locked. A standalone server (Sentinel's master included) has no slots: one
// counter serves every name there, one key whatever the number of names
// (per-slot keys would take ~2 MB for 100 000 names, counters and the main
// dictionary's table). A proxy that spreads names over servers by hash tag
// still works with it: each server's copy serves the names routed to it.

// Slots is the number of Cluster hash slots.
const Slots = 16384

// Slot returns the Cluster hash slot of a hash tag (the part of a key that
// is hashed: a primitive's keys hash their name).
func Slot(tag string) int {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^tag[i]]
	}
	return int(crc & (Slots - 1))
}

// crcTable is CRC-16/XMODEM's (polynomial 0x1021), Redis Cluster's key hash.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// tagChars are the characters of slot tags.
const tagChars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

var (
	tagsOnce sync.Once
	tags     *[Slots][3]byte // slot -> its tag, padded with zero bytes
)

// buildTags finds for every slot the first tag of one to three tagChars
// whose slot it is (TestSlotTags: every slot has one); about 0.6 ms, once per
// process, at the first Client's first lock.
func buildTags() {
	t := new([Slots][3]byte)
	found := 0
	var b [3]byte
	var try func(n, i int)
	try = func(n, i int) {
		if i == n {
			s := Slot(string(b[:n]))
			if t[s][0] == 0 {
				copy(t[s][:], b[:n])
				found++
			}
			return
		}
		for j := 0; j < len(tagChars) && found < Slots; j++ {
			b[i] = tagChars[j]
			try(n, i+1)
		}
	}
	for n := 1; n <= 3 && found < Slots; n++ {
		try(n, 0)
	}
	tags = t
}

// SlotTag returns a tag of one to three characters whose hash slot is slot
// (0 to Slots-1).
func SlotTag(slot int) string {
	tagsOnce.Do(buildTags)
	t := &tags[slot&(Slots-1)]
	n := 3
	for n > 0 && t[n-1] == 0 {
		n--
	}
	return string(t[:n])
}

// FenceKey returns the fencing counter of the primitive called name: on a
// Cluster the counter of the name's hash slot, "<prefix>fence:{<tag>}", in
// the slot of every other key of the name; else "<prefix>fence".
func (c *Core) FenceKey(name string) string {
	if !c.Sharded {
		if c.fence != "" { // Init made it: every handle shares it
			return c.fence
		}
		return c.Prefix + "fence"
	}
	return c.Prefix + "fence:{" + SlotTag(Slot(name)) + "}"
}

// FenceOf returns the fencing counter of the primitive whose key is key
// ("<prefix>{<name>}", as Key returns) on a Cluster or not, for tests and
// tools; "" when key is not of that form.
func FenceOf(key string, cluster bool) string {
	i := strings.IndexByte(key, '{')
	j := strings.IndexByte(key, '}')
	if i < 0 || j <= i+1 {
		return ""
	}
	c := Core{Config: Config{Prefix: key[:i]}, Sharded: cluster}
	return c.FenceKey(key[i+1 : j])
}
