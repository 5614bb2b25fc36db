package zfsmodel

import "strings"

// Type is a dataset type. The values form a mask like libzfs's zfs_type_t.
type Type int

// Dataset types.
const (
	Filesystem Type = 1 << 0
	Snapshot   Type = 1 << 1
	Volume     Type = 1 << 2

	AnyType = Filesystem | Snapshot | Volume
)

func (t Type) String() string {
	var parts []string
	for _, x := range []struct {
		t Type
		s string
	}{{Filesystem, "filesystem"}, {Volume, "volume"}, {Snapshot, "snapshot"}} {
		if t&x.t != 0 {
			parts = append(parts, x.s)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

func parseType(s string) (Type, bool) {
	switch s {
	case "filesystem":
		return Filesystem, true
	case "volume":
		return Volume, true
	case "snapshot":
		return Snapshot, true
	}
	return 0, false
}

// Source says where a property value comes from, as in the SOURCE column.
type Source int

// Property sources (the values are zprop_source_t's, so -s filters are masks).
const (
	SourceNone      Source = 0x1 // "-": read-only or not set
	SourceDefault   Source = 0x2
	SourceTemporary Source = 0x4
	SourceLocal     Source = 0x8
	SourceInherited Source = 0x10
	SourceReceived  Source = 0x20

	sourceAll Source = 0x3f
)

// PropValue is one property of one dataset as zfs get shows it.
type PropValue struct {
	Value    string // formatted as requested (human or parsable)
	Source   Source
	From     string // the dataset inherited from, for SourceInherited
	Received string // the received value, "-" when none
}

// SourceString is the SOURCE column text.
func (p PropValue) SourceString() string {
	switch p.Source {
	case SourceDefault:
		return "default"
	case SourceLocal:
		return "local"
	case SourceTemporary:
		return "temporary"
	case SourceInherited:
		return "inherited from " + p.From
	case SourceReceived:
		return "received"
	}
	return "-"
}
