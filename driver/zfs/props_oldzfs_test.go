package zfs

import (
	"context"
	"reflect"
	"testing"
)

// zfs-fuse's answers (captured from zfs-fuse 0.7 on Debian 12).
const (
	fuseListUsage = "invalid option 'p'\nusage:\n\tlist [-rH][-d max] [-o property[,...]] [-t type[,...]] [-s property] ...\n"
	fuseBadClones = "bad property list: invalid property 'clones'\nusage:\n\tget [-rHp] [-d max] [-o \"all\" | field[,...]] [-s source[,...]]\n"
)

// TestListOnZFSWithoutListP: a zfs that refuses `list -p` is read with
// `zfs get -p` from then on (one refusal per CLI), rows filtered by type
// and walked to the same depth; a property it refuses is asked once and
// then left out, reported "-".
func TestListOnZFSWithoutListP(t *testing.T) {
	ctx := context.Background()
	getDS := "/sbin/zfs get -Hp -o name,property,value -d 1 type,origin,m:p tank/v"
	ex := &scripted{answers: map[string]Output{
		"/sbin/zfs list -Hp -o name,origin,clones,m:p -t filesystem,volume,snapshot -d 1 tank/v": {Stderr: fuseListUsage, Code: 2},
		"/sbin/zfs get -Hp -o name,property,value -d 1 type,origin,clones,m:p tank/v":            {Stderr: fuseBadClones, Code: 2},
		getDS: {Stdout: "tank/v\ttype\tfilesystem\ntank/v\torigin\ttank/s@c\ntank/v\tm:p\ta\tb\n" +
			"tank/v@s1\ttype\tsnapshot\ntank/v@s1\torigin\t-\ntank/v@s1\tm:p\t-\n"},
		"/sbin/zfs get -Hp -o name,property,value -r type,m:p tank": {Stdout: "tank\ttype\tfilesystem\ntank\tm:p\t-\n" +
			"tank/v\ttype\tfilesystem\ntank/v\tm:p\tx\ntank/v@s1\ttype\tsnapshot\ntank/v@s1\tm:p\ty\n"},
	}}
	c := &CLI{Exec: ex}
	opts := ListOptions{Depth: 1, Types: []string{"filesystem", "volume", "snapshot"}, Props: []string{"origin", "clones", "m:p"}}
	rows, err := c.List(ctx, "tank/v", opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{Name: "tank/v", Props: map[string]string{"origin": "tank/s@c", "clones": "-", "m:p": "a\tb"}},
		{Name: "tank/v@s1", Props: map[string]string{"origin": "-", "clones": "-", "m:p": "-"}},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows %q\nwant %q", rows, want)
	}
	if len(ex.lines) != 3 {
		t.Fatalf("first list ran %q: want the refused list, the refused get, the get", ex.lines)
	}

	// Learnt: the next lists go straight to `zfs get`, without clones.
	ex.lines = nil
	if _, err := c.List(ctx, "tank/v", opts); err != nil {
		t.Fatal(err)
	}
	snaps, err := c.List(ctx, "tank", ListOptions{Recursive: true, Types: []string{"snapshot"}, Props: []string{"m:p"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Row{{Name: "tank/v@s1", Props: map[string]string{"m:p": "y"}}}; !reflect.DeepEqual(snaps, want) {
		t.Fatalf("snapshots %q, want %q", snaps, want)
	}
	if want := []string{getDS, "/sbin/zfs get -Hp -o name,property,value -r type,m:p tank"}; !reflect.DeepEqual(ex.lines, want) {
		t.Fatalf("ran %q\nwant %q", ex.lines, want)
	}
}

// TestListOnOldZFSErrors: a missing dataset keeps zfs's message (callers
// read IsNotExist), and output that is not get's rows is an error.
func TestListOnOldZFSErrors(t *testing.T) {
	ctx := context.Background()
	ex := &scripted{answers: map[string]Output{
		"/sbin/zfs list -Hp -o name -t snapshot tank/x@s":        {Stderr: fuseListUsage, Code: 2},
		"/sbin/zfs get -Hp -o name,property,value type tank/x@s": {Stderr: "cannot open 'tank/x@s': dataset does not exist\n", Code: 1},
		"/sbin/zfs get -Hp -o name,property,value type tank/y":   {Stdout: "tank/y filesystem\n"},
	}}
	c := &CLI{Exec: ex}
	if _, err := c.List(ctx, "tank/x@s", ListOptions{Types: []string{"snapshot"}}); !IsNotExist(err) {
		t.Fatalf("missing snapshot: %v", err)
	}
	if rows, err := c.List(ctx, "tank/y", ListOptions{}); err == nil {
		t.Fatalf("garbled output read as %q", rows)
	}
}

// TestListOnModernZFSRunsOnce: a zfs with `list -p` gets one exec per List
// and never `zfs get`, even when the listing fails.
func TestListOnModernZFSRunsOnce(t *testing.T) {
	ex := &scripted{answers: map[string]Output{
		"/sbin/zfs list -Hp -o name,clones -t snapshot -r tank": {Stderr: "cannot open 'tank': dataset does not exist\n", Code: 1},
	}}
	c := &CLI{Exec: ex}
	for range 2 {
		if _, err := c.List(context.Background(), "tank", ListOptions{Recursive: true, Types: []string{"snapshot"}, Props: []string{"clones"}}); !IsNotExist(err) {
			t.Fatalf("want the missing dataset, got %v", err)
		}
	}
	if len(ex.lines) != 2 {
		t.Fatalf("ran %q: want one list per call", ex.lines)
	}
}
