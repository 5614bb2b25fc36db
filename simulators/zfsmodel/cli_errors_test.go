package zfsmodel

import (
	"strings"
	"testing"
)

// TestCLIErrors checks exit codes and the exact texts of zfs's errors.
func TestCLIErrors(t *testing.T) {
	setup := []string{
		"zfs create tank/a",
		"zfs create -V 16M tank/vol",
		"zfs snapshot tank/a@s1",
		"zfs clone tank/a@s1 tank/clone",
		"zfs create tank/a/child",
	}
	cases := []struct {
		cmd    []string
		code   int
		stderr string // exact, or a prefix when it ends with "..."
		stdout string
	}{
		{[]string{"zfs", "create", "tank/a"}, 1, "cannot create 'tank/a': dataset already exists\n", ""},
		{[]string{"zfs", "create", "tank/x/y"}, 1, "cannot create 'tank/x/y': parent does not exist\n", ""},
		{[]string{"zfs", "create", "tank/a b$"}, 1, "cannot create 'tank/a b$': invalid character '$' in name\n", ""},
		{[]string{"zfs", "create", "tank/a@b"}, 1, "cannot create 'tank/a@b': snapshot delimiter '@' is not expected here\n", ""},
		{[]string{"zfs", "create", "nopool/a"}, 1, "cannot create 'nopool/a': no such pool 'nopool'\n", ""},
		{[]string{"zfs", "create", "tank"}, 1, "cannot create 'tank': missing dataset name\n", ""},
		{[]string{"zfs", "create", "tank/vol/x"}, 1, "cannot create 'tank/vol/x': parent is not a filesystem\n", ""},
		{[]string{"zfs", "create", "-o", "foo=bar", "tank/f"}, 1, "cannot create 'tank/f': invalid property 'foo'\n", ""},
		{[]string{"zfs", "create", "-o", "quota=0", "tank/f"}, 1, "cannot create 'tank/f': use 'none' to disable quota/refquota\n", ""},
		{[]string{"zfs", "create", "-o", "quota=abc", "tank/f"}, 1, "cannot create 'tank/f': bad numeric value 'abc'\n", ""},
		{[]string{"zfs", "create", "-o", "atime=maybe", "tank/f"}, 1, "cannot create 'tank/f': 'atime' must be one of 'on | off'\n", ""},
		{[]string{"zfs", "create", "-o", "volsize=1G", "tank/f"}, 1, "cannot create 'tank/f': 'volsize' does not apply to datasets of this type\n", ""},
		{[]string{"zfs", "create", "-o", "used=1", "tank/f"}, 1, "cannot create 'tank/f': 'used' is readonly\n", ""},
		{[]string{"zfs", "create", "-o", "a:b=1", "-o", "a:b=2", "tank/f"}, 1, "property 'a:b' specified multiple times\n", ""},
		{[]string{"zfs", "create", "-o", "novalue", "tank/f"}, 1, "missing '=' for property=value argument\n", ""},
		{[]string{"zfs", "create", "-V", "1Q", "tank/v2"}, 1, "bad volume size '1Q': invalid numeric suffix 'Q'\n", ""},
		{[]string{"zfs", "create", "-V", "0", "tank/v2"}, 1, "cannot create 'tank/v2': volume size cannot be zero\n", ""},
		{[]string{"zfs", "create", "-b", "3000", "-V", "1M", "tank/v2"}, 1, "Warning: volblocksize (3000) is less than the default minimum block size (16384).\nTo reduce wasted space a volblocksize of 16384 is recommended.\ncannot create 'tank/v2': 'volblocksize' must be power of 2 from 512B to 16M\n", ""},
		{[]string{"zfs", "create", "-V", "1M", "nopool/v"}, 1, "cannot open 'nopool': no such pool\n", ""},
		{[]string{"zfs", "create", "-s", "tank/f"}, 2, "'-s' and '-b' can only be used when creating a volume\nusage:\n\tcreate [-Pnpuv]...", ""},
		{[]string{"zfs", "create"}, 2, "missing filesystem argument\nusage:\n...", ""},
		{[]string{"zfs", "create", "-V"}, 2, "missing size argument\nusage:\n...", ""},
		{[]string{"zfs", "create", "-Z", "tank/f"}, 2, "invalid option 'Z'\nusage:\n...", ""},
		{[]string{"zfs", "create", "tank/f", "tank/g"}, 2, "too many arguments\nusage:\n...", ""},
		{[]string{"zfs", "destroy", "tank/a"}, 1, "cannot destroy 'tank/a': filesystem has children\nuse '-r' to destroy the following datasets:\ntank/a/child\ntank/a@s1\n", ""},
		{[]string{"zfs", "destroy", "-r", "tank/a"}, 1, "cannot destroy 'tank/a': filesystem has dependent clones\nuse '-R' to destroy the following datasets:\ntank/clone\n", ""},
		{[]string{"zfs", "destroy", "tank/a@s1"}, 1, "cannot destroy 'tank/a@s1': snapshot has dependent clones\nuse '-R' to destroy the following datasets:\ntank/clone\n", ""},
		{[]string{"zfs", "destroy", "tank/nope"}, 1, "cannot open 'tank/nope': dataset does not exist\n", ""},
		{[]string{"zfs", "destroy", "tank/a@nope"}, 1, "could not find any snapshots to destroy; check snapshot names.\n", ""},
		{[]string{"zfs", "destroy", "tank/nope@s1"}, 1, "cannot open 'tank/nope': dataset does not exist\n", ""},
		{[]string{"zfs", "destroy", "tank"}, 1, "cannot destroy 'tank': operation does not apply to pools\nuse 'zfs destroy -r tank' to destroy all datasets in the pool\nuse 'zpool destroy tank' to destroy the pool itself\n", ""},
		{[]string{"zfs", "destroy", "-n", "-v", "-R", "tank/a"}, 0, "", "would destroy tank/a/child\nwould destroy tank/clone\nwould destroy tank/a@s1\nwould destroy tank/a\n"},
		{[]string{"zfs", "destroy"}, 2, "missing dataset argument\nusage:\n...", ""},
		{[]string{"zfs", "list", "tank/nope"}, 1, "cannot open 'tank/nope': dataset does not exist\n", ""},
		{[]string{"zfs", "list", "-t", "filesystem", "tank/vol"}, 1, "cannot open 'tank/vol': operation not applicable to datasets of this type\n", ""},
		{[]string{"zfs", "list", "-o", "name,nosuch", "tank"}, 2, "bad property list: invalid property 'nosuch'\nusage:\n\tlist [-Hp] [-r|-d max]...", ""},
		{[]string{"zfs", "list", "-t", "bogus"}, 2, "invalid type 'bogus'\nusage:\n...", ""},
		{[]string{"zfs", "list", "-d", "x"}, 2, "x is not an integer\nusage:\n...", ""},
		{[]string{"zfs", "list", "-o"}, 2, "invalid option 'o'\nusage:\n...", ""},
		{[]string{"zfs", "get", "used", "tank/nope"}, 1, "cannot open 'tank/nope': dataset does not exist\n", ""},
		{[]string{"zfs", "get", "nosuch", "tank"}, 2, "bad property list: invalid property 'nosuch'\nusage:\n...", ""},
		{[]string{"zfs", "get"}, 2, "missing property argument\nusage:\n...", ""},
		{[]string{"zfs", "get", "-o"}, 2, "missing argument for 'o' option\nusage:\n...", ""},
		{[]string{"zfs", "get", "-o", "bogus", "all"}, 2, "invalid column name 'bogus'\nusage:\n...", ""},
		{[]string{"zfs", "get", "-s", "bogus", "all"}, 2, "invalid source 'bogus'\nusage:\n...", ""},
		{[]string{"zfs", "set", "nosuch=1", "tank/a"}, 1, "cannot set property for 'tank/a': invalid property 'nosuch'\n", ""},
		{[]string{"zfs", "set", "used=1", "tank/a"}, 1, "cannot set property for 'tank/a': 'used' is readonly\n", ""},
		{[]string{"zfs", "set", "casesensitivity=mixed", "tank/a"}, 1, "cannot set property for 'tank/a': 'casesensitivity' is readonly\n", ""},
		{[]string{"zfs", "set", "mountpoint=rel", "tank/a"}, 1, "cannot set property for 'tank/a': 'mountpoint' must be an absolute path, 'none', or 'legacy'\n", ""},
		{[]string{"zfs", "set", "Foo:bar=1", "tank/a"}, 1, "cannot set property for 'tank/a': invalid property 'Foo:bar'\n", ""},
		{[]string{"zfs", "set", "compression=on", "tank/a@s1"}, 1, "cannot set property for 'tank/a@s1': this property can not be modified for snapshots\n", ""},
		{[]string{"zfs", "set", "quota=1K", "tank/a"}, 1, "cannot set property for 'tank/a': size is less than current used or reserved space\n", ""},
		{[]string{"zfs", "set", "reservation=10G", "tank/a"}, 1, "cannot set property for 'tank/a': size is greater than available space\n", ""},
		{[]string{"zfs", "set", "volsize=1000", "tank/vol"}, 1, "cannot set property for 'tank/vol': 'volsize' must be a multiple of volume block size (16K)\n", ""},
		{[]string{"zfs", "set", "volsize=0", "tank/vol"}, 1, "cannot set property for 'tank/vol': 'volsize' cannot be zero\n", ""},
		{[]string{"zfs", "set", "canmount=off", "tank/vol"}, 1, "cannot set property for 'tank/vol': 'canmount' does not apply to datasets of this type\n", ""},
		{[]string{"zfs", "set", "a:b=1", "a:b=2", "tank/a"}, 255, "property 'a:b' specified multiple times\n", ""},
		{[]string{"zfs", "set", "a:b=1", "tank/nope"}, 1, "cannot open 'tank/nope': dataset does not exist\n", ""},
		{[]string{"zfs", "set", "a:b=1"}, 2, "missing dataset name(s)\nusage:\n\tset [-u] <property=value> ...", ""},
		{[]string{"zfs", "set", "tank/a"}, 2, "missing property=value argument(s)\nusage:\n...", ""},
		{[]string{"zfs", "set", "a:b=1", "tank/a", "c:d=2"}, 2, "invalid argument order\nusage:\n...", ""},
		{[]string{"zfs", "inherit", "quota", "tank/a"}, 1, "'quota' property cannot be inherited\nuse 'zfs set quota=none' to clear\nuse 'zfs inherit -S quota' to revert to received value\n", ""},
		{[]string{"zfs", "inherit", "used", "tank/a"}, 1, "used property is read-only\n", ""},
		{[]string{"zfs", "inherit", "nosuch", "tank/a"}, 2, "invalid property 'nosuch'\nusage:\n\tinherit [-rS] <property> <filesystem|volume|snapshot> ...\n\nThe following properties are supported:\n...", ""},
		{[]string{"zfs", "inherit", "canmount", "tank/a"}, 1, "'canmount' property cannot be inherited\n", ""},
		{[]string{"zfs", "inherit", "atime", "tank/vol"}, 1, "cannot inherit atime for 'tank/vol': property doesn't apply to datasets of this type\n", ""},
		{[]string{"zfs", "snapshot", "tank/a@s1"}, 1, "cannot create snapshot 'tank/a@s1': dataset already exists\n", ""},
		{[]string{"zfs", "snapshot", "-r", "tank/a@s1"}, 1, "cannot create snapshot 'tank/a@s1': dataset already exists\nno snapshots were created\n", ""},
		{[]string{"zfs", "snapshot", "tank/nope@s1"}, 2, "cannot open 'tank/nope': dataset does not exist\nusage:\n\tsnapshot [-r]...", ""},
		{[]string{"zfs", "snapshot", "tank/a"}, 2, "usage:\n\tsnapshot [-r] [-o property=value] ... <filesystem|volume>@<snap> ...\n...", ""},
		{[]string{"zfs", "snapshot", "tank/a@bad$"}, 1, "cannot create snapshot 'tank/a@bad$': invalid character '$' in name\n", ""},
		{[]string{"zfs", "snapshot", "-o", "compression=on", "tank/a@s9"}, 1, "cannot create snapshots : this property can not be modified for snapshots\n", ""},
		{[]string{"zfs", "clone", "tank/a@nope", "tank/c2"}, 1, "cannot open 'tank/a@nope': dataset does not exist\n", ""},
		{[]string{"zfs", "clone", "tank/a@s1", "tank/clone"}, 1, "cannot create 'tank/clone': dataset already exists\n", ""},
		{[]string{"zfs", "clone", "tank/a@s1", "tank/x/y"}, 1, "cannot create 'tank/x/y': parent does not exist\n", ""},
		{[]string{"zfs", "clone", "tank/a@s1"}, 2, "missing target dataset argument\nusage:\n...", ""},
		{[]string{"zfs", "promote", "tank/a"}, 1, "cannot promote 'tank/a': not a cloned filesystem\n", ""},
		{[]string{"zfs", "promote", "tank/nope"}, 1, "cannot open 'tank/nope': dataset does not exist\n", ""},
		{[]string{"zfs", "promote"}, 2, "missing clone filesystem argument\nusage:\n...", ""},
		{[]string{"zfs", "rename", "tank/clone", "tank/a"}, 1, "cannot rename 'tank/clone': dataset already exists\n", ""},
		{[]string{"zfs", "rename", "tank/a", "tank/a/b"}, 1, "cannot rename to 'tank/a/b': New dataset name cannot be a descendant of current dataset name\n", ""},
		{[]string{"zfs", "rename", "tank/a", "tank/x/y"}, 1, "cannot create 'tank/x/y': parent does not exist\n", ""},
		{[]string{"zfs", "rename", "tank/a@s1", "tank/clone@s2"}, 1, "cannot rename to 'tank/clone@s2': snapshots must be part of same dataset\n", ""},
		{[]string{"zfs", "rename", "-r", "tank/a", "tank/b"}, 2, "source dataset for recursive rename must be a snapshot\nusage:\n...", ""},
		{[]string{"zfs", "rollback", "tank/a@nope"}, 1, "cannot open 'tank/a@nope': dataset does not exist\n", ""},
		{[]string{"zfs", "send", "tank/a@nope"}, 1, "cannot open 'tank/a@nope': dataset does not exist\n", ""},
		{[]string{"zfs", "send", "-i", "nope", "tank/a@s1"}, 1, "Warning: incremental source didn't specify type, assuming snapshot. Use '@' or '#' prefix to avoid ambiguity.\ncannot open 'tank/a@nope': dataset does not exist\n", ""},
		{[]string{"zfs", "receive", "tank/r"}, 1, "cannot receive: failed to read from stream\n", ""},
		{[]string{"zfs", "receive"}, 2, "missing snapshot argument\nusage:\n...", ""},
		{[]string{"zfs", "nosuch"}, 2, "unrecognized command 'nosuch'\nusage: zfs command args ...\n...", ""},
		{[]string{"zfs"}, 2, "missing command\nusage: zfs command args ...\n...", ""},
		{[]string{"zfs", "create", "--help"}, 2, "usage:\n\tcreate [-Pnpuv] [-o property=value] ... <filesystem>\n\tcreate [-Pnpsv] [-b blocksize] [-o property=value] ... -V <size> <volume>\n\nFor the property list, run: zfs set|get\n\nFor the delegated permission list, run: zfs allow|unallow\n\nFor further help on a command or topic, run: zfs help [<topic>]\n", ""},
		{[]string{"zfs", "bookmark", "tank/a@s1", "tank/a#b"}, 1, "zfs bookmark: this command is not modelled by the simulator\n", ""},
		{[]string{"zpool", "list", "nope"}, 1, "cannot open 'nope': no such pool\n", ""},
		{[]string{"zpool", "get", "size", "nope"}, 1, "Cannot get properties of nope: no such pool available.\n", ""},
		{[]string{"zpool", "get", "bogus", "tank"}, 2, "bad property list: invalid property 'bogus'\nusage:\n\tget [-Hp]...", ""},
		{[]string{"zpool", "bogus"}, 2, "unrecognized command 'bogus'\nusage: zpool command args ...\n...", ""},
		{[]string{"zpool", "set", "failmode=bogus", "tank"}, 1, "cannot set property for 'tank': 'failmode' must be one of 'wait | continue | panic'\n", ""},
		{[]string{"zpool", "set", "size=1", "tank"}, 1, "cannot set property for 'tank': 'size' is readonly\n", ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.cmd, " "), func(t *testing.T) {
			m, _ := newModel(t, 1<<30)
			for _, s := range setup {
				must(t, m, s)
			}
			r := run(m, nil, c.cmd...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, c.code, r.stderr)
			}
			if p, ok := strings.CutSuffix(c.stderr, "..."); ok {
				if !strings.HasPrefix(r.stderr, p) {
					t.Errorf("stderr %q, want prefix %q", r.stderr, p)
				}
			} else if r.stderr != c.stderr {
				t.Errorf("stderr %q, want %q", r.stderr, c.stderr)
			}
			if r.stdout != c.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, c.stdout)
			}
		})
	}
}
