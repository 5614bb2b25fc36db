package zfs

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// scripted is a unit-test Executor: it records lines and answers from a
// table keyed by the exact line.
type scripted struct {
	lines   []string
	answers map[string]Output
	err     error
}

func (s *scripted) Run(_ context.Context, line string, _ RunOptions) (Output, error) {
	s.lines = append(s.lines, line)
	if s.err != nil {
		return Output{}, s.err
	}
	return s.answers[line], nil
}
func (s *scripted) Close() error { return nil }

func TestCommandsAreBuiltAndQuoted(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		sudo bool
		call func(c *CLI) error
		want string
	}{
		{"create zvol", false, func(c *CLI) error {
			return c.Create(ctx, "tank/k8s/pvc-1", CreateOptions{Parents: true, Volsize: 1 << 30,
				Props: []Prop{{"democratic-csi:csi_volume_name", "pvc-1"}, {"volblocksize", "16K"}}})
		}, "/sbin/zfs create -p -o democratic-csi:csi_volume_name=pvc-1 -o volblocksize=16K -V 1073741824 tank/k8s/pvc-1"},
		{"sudo", true, func(c *CLI) error { return c.Destroy(ctx, "tank/a", DestroyOptions{Recursive: true, Force: true}) },
			"/usr/bin/sudo /sbin/zfs destroy -r -f tank/a"},
		{"hostile value", false, func(c *CLI) error {
			return c.Set(ctx, "tank/a", Prop{"org.freenas:description", "x'; rm -rf / #$(id)\n"})
		}, `/sbin/zfs set 'org.freenas:description=x'\''; rm -rf / #$(id)` + "\n" + `' tank/a`},
		{"snapshot", false, func(c *CLI) error { return c.Snapshot(ctx, "tank/a@s1", Prop{"m:p", "v"}) },
			"/sbin/zfs snapshot -o m:p=v tank/a@s1"},
		{"send receive", true, func(c *CLI) error { return c.SendReceive(ctx, "tank/a@s", "tank/b") },
			`sh -c '/usr/bin/sudo /sbin/zfs send tank/a@s | /usr/bin/sudo /sbin/zfs receive tank/b'`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := &scripted{}
			c := &CLI{Exec: ex, Sudo: tc.sudo}
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			if len(ex.lines) != 1 || ex.lines[0] != tc.want {
				t.Fatalf("ran %q\nwant %q", ex.lines, tc.want)
			}
		})
	}
}

func TestGetAndListParse(t *testing.T) {
	ex := &scripted{answers: map[string]Output{
		"/sbin/zfs get -Hp -o name,property,value,source volsize,m:ctx,refquota tank/v": {Stdout: "tank/v\tvolsize\t1073741824\tlocal\n" +
			"tank/v\tm:ctx\t{\"a\":\"b\tc\"}\tlocal\ntank/v\trefquota\t-\t-\n"},
		"/sbin/zfs list -Hp -o name,used,m:p -t volume -r tank": {Stdout: "tank/a\t100\t-\ntank/b\t200\tx y\n"},
	}}
	c := &CLI{Exec: ex}
	p, err := c.Get(context.Background(), "tank/v", "volsize", "m:ctx", "refquota")
	if err != nil {
		t.Fatal(err)
	}
	if p.Int("volsize") != 1<<30 || p["m:ctx"].Value != "{\"a\":\"b\tc\"}" || p["refquota"].IsSet() || p.Int("refquota") != -1 {
		t.Fatalf("parsed %+v", p)
	}
	rows, err := c.List(context.Background(), "tank", ListOptions{Recursive: true, Types: []string{"volume"}, Props: []string{"used", "m:p"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Name != "tank/b" || rows[1].Props["m:p"] != "x y" || rows[0].Props["used"] != "100" {
		t.Fatalf("rows %+v", rows)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	cases := []struct {
		stderr string
		is     func(error) bool
	}{
		{"cannot open 'tank/x': dataset does not exist\n", IsNotExist},
		{"cannot create 'tank/x': dataset already exists\n", IsExists},
		{"cannot receive new filesystem stream: destination 'tank/b' exists\n", IsExists},
		{"cannot destroy 'tank/x': dataset is busy\n", IsBusy},
		{"cannot destroy 'tank/x': filesystem has dependent clones\n", HasDependentClones},
		{"cannot create 'tank/x': out of space\n", IsOutOfSpace},
	}
	all := []func(error) bool{IsNotExist, IsExists, IsBusy, HasDependentClones, IsOutOfSpace}
	for _, tc := range cases {
		ex := &scripted{answers: map[string]Output{"/sbin/zfs inherit sharenfs tank/x": {Stderr: tc.stderr, Code: 1}}}
		err := (&CLI{Exec: ex}).Inherit(context.Background(), "tank/x", "sharenfs")
		matched := 0
		for _, f := range all {
			if f(err) {
				matched++
			}
		}
		if !tc.is(err) || matched != 1 {
			t.Errorf("%q: classified wrongly (%d matches): %v", tc.stderr, matched, err)
		}
	}
	// Transport errors keep their sentinel and are not zfs errors.
	ex := &scripted{err: fmt.Errorf("ssh root@h:22: %w", ErrConnectionLost)}
	err := (&CLI{Exec: ex}).Inherit(context.Background(), "tank/x", "sharenfs")
	if !errors.Is(err, ErrConnectionLost) || IsNotExist(err) {
		t.Fatalf("transport error: %v", err)
	}
}
