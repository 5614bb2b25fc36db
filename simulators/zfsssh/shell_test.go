package zfsssh

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestTokenizer checks, through a real SSH exec, the argv that each simple
// command receives after quote removal and expansion.
func TestTokenizer(t *testing.T) {
	e := startEnv(t, nil)
	cases := []struct {
		name string
		line string
		want [][]string
	}{
		{"blanks", "echo  a\tb", [][]string{{"echo", "a", "b"}}},
		{"single quotes", `echo 'a b' 'x"y' '$HOME'`, [][]string{{"echo", "a b", `x"y`, "$HOME"}}},
		{"double quotes", `echo "a b" "q\"q" "\$x" "back\\slash" "keep\n"`, [][]string{{"echo", "a b", `q"q`, "$x", `back\slash`, `keep\n`}}},
		{"backslash outside quotes", `echo a\ b \$x \'`, [][]string{{"echo", "a b", "$x", "'"}}},
		{"adjacent parts join", `echo a'b'"c"\d`, [][]string{{"echo", "abcd"}}},
		{"empty quotes are an argument", `echo '' ""`, [][]string{{"echo", "", ""}}},
		{"newline inside quotes is one argument", "zfs set \"a:b=line1\nline2\" tank", [][]string{{"zfs", "set", "a:b=line1\nline2", "tank"}}},
		{"substitution quoted stays literal", `zfs set 'democratic-csi:x=$(touch /tmp/pwned)' "y=\$(id)" tank/a`,
			[][]string{{"zfs", "set", "democratic-csi:x=$(touch /tmp/pwned)", "y=$(id)", "tank/a"}}},
		{"backquote quoted stays literal", "echo '`id`' \\`id\\`", [][]string{{"echo", "`id`", "`id`"}}},
		{"unset variables vanish", `echo $HOME "$HOME" ${PATH}x`, [][]string{{"echo", "", "x"}}},
		{"$0 and $?", `false; echo $0 $?`, [][]string{{"false"}, {"echo", "sh", "1"}}},
		{"assignment then use", `A='x y'; echo "$A" $A`, [][]string{{"echo", "x y", "x", "y"}}},
		{"prefix assignment is not argv", `LANG=C zfs list`, [][]string{{"zfs", "list"}}},
		{"semicolon and newline", "echo a;echo b\necho c", [][]string{{"echo", "a"}, {"echo", "b"}, {"echo", "c"}}},
		{"and/or", `false && echo no || echo yes`, [][]string{{"false"}, {"echo", "yes"}}},
		{"comment", "echo a # echo b\n# whole line\necho c#not-a-comment", [][]string{{"echo", "a"}, {"echo", "c#not-a-comment"}}},
		{"redirections are not arguments", `echo a >/dev/null 2>&1 </dev/null`, [][]string{{"echo", "a"}}},
		{"io number needs no space", `echo 2>/dev/null a`, [][]string{{"echo", "a"}}},
		{"digits with space are an argument", `echo 2 >/dev/null`, [][]string{{"echo", "2"}}},
		{"line continuation", "echo a \\\nb", [][]string{{"echo", "a", "b"}}},
		{"pipeline", `echo x | cat`, [][]string{{"echo", "x"}, {"cat"}}},
		{"operators need no blanks", `echo a&&echo b||echo c;echo d|cat`, [][]string{{"echo", "a"}, {"echo", "b"}, {"echo", "d"}, {"cat"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.srv.ResetCommands()
			r := e.run(tc.line)
			if r.err != nil {
				t.Fatalf("run: %v", r.err)
			}
			got := argvs(e.srv.Commands(), 0)
			if len(tc.want) == len(got) && len(got) > 0 && tc.name == "pipeline" {
				// Pipeline commands start concurrently: compare as a set.
				if !(reflect.DeepEqual(got, tc.want) || reflect.DeepEqual(got, [][]string{tc.want[1], tc.want[0]})) {
					t.Fatalf("argv = %q, want %q", got, tc.want)
				}
				return
			}
			if tc.name == "operators need no blanks" {
				// The last two run as a pipeline, in either order.
				if len(got) == 4 && reflect.DeepEqual(got[3], []string{"echo", "d"}) {
					got[2], got[3] = got[3], got[2]
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("argv = %q, want %q", got, tc.want)
			}
		})
	}
	if _, ok := e.srv.File("/tmp/pwned"); ok {
		t.Fatal("a quoted $(touch ...) was executed")
	}
}

func TestRefusedSyntax(t *testing.T) {
	e := startEnv(t, nil)
	cases := []struct {
		name, line string
		stdout     string
		stderr     string
	}{
		{"unquoted command substitution", "touch /tmp/x $(touch /tmp/pwned)", "", "sh: 1: Syntax error: command substitution $(...) is not supported"},
		{"substitution in double quotes", `echo "$(touch /tmp/pwned)"`, "", "sh: 1: Syntax error: command substitution $(...)"},
		{"arithmetic", `echo $((1+1))`, "", "sh: 1: Syntax error: command substitution $(...)"},
		{"backquotes", "echo `touch /tmp/pwned`", "", "sh: 1: Syntax error: command substitution `...`"},
		{"backquotes in double quotes", "echo \"`touch /tmp/pwned`\"", "", "sh: 1: Syntax error: command substitution `...`"},
		{"lines before the error run", "echo first\necho $(touch /tmp/pwned)", "first\n", "sh: 2: Syntax error: command substitution"},
		{"here-document", "cat <<EOF\nx\nEOF", "", "sh: 1: Syntax error: here-documents"},
		{"subshell", "(echo a)", "", "sh: 1: Syntax error: subshells"},
		{"compound", "if true; then echo a; fi", "", "sh: 1: Syntax error: compound commands (if ...)"},
		{"background", "sleep 1 &", "", "sh: 1: Syntax error: background jobs"},
		{"unterminated quote", "echo 'abc", "", "sh: 1: Syntax error: Unterminated quoted string"},
		{"trailing operator", "echo a &&", "", "sh: 1: Syntax error: end of file unexpected"},
		{"leading semicolon", "; echo a", "", `sh: 1: Syntax error: ";" unexpected`},
		{"bad substitution", "echo ${a:-b}", "", "sh: 1: Syntax error: Bad substitution"},
		{"stray fi", "fi", "", `sh: 1: Syntax error: "fi" unexpected`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(tc.line)
			if r.code != 2 || r.stdout != tc.stdout || !strings.HasPrefix(r.stderr, tc.stderr) {
				t.Fatalf("run(%q) = %+v, want exit 2, stdout %q, stderr starting %q", tc.line, r, tc.stdout, tc.stderr)
			}
		})
	}
	if _, ok := e.srv.File("/tmp/pwned"); ok {
		t.Fatal("a refused substitution was executed")
	}
}

// TestExpand exercises parameter expansion directly on the interpreter.
func TestExpand(t *testing.T) {
	srv, err := New(Options{Host: newFakeHost(t), Users: defaultUsers()})
	if err != nil {
		t.Fatal(err)
	}
	env := &sessionEnv{srv: srv, user: srv.users["root"]}
	cases := []struct {
		args []string
		line string
		want []string
	}{
		{[]string{"a b", "c"}, `echo "$@"`, []string{"echo", "a b", "c"}},
		{[]string{"a b", "c"}, `echo $@`, []string{"echo", "a", "b", "c"}},
		{[]string{"a b", "c"}, `echo "$*"`, []string{"echo", "a b c"}},
		{[]string{"a b", "c"}, `echo x"$@"y`, []string{"echo", "xa b", "cy"}},
		{[]string{"one"}, `echo $# $1 ${1} $2.`, []string{"echo", "1", "one", "one", "."}},
		{nil, `echo "$@"`, []string{"echo"}},
		{nil, `echo $ "$" a$`, []string{"echo", "$", "$", "a$"}},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			srv.ResetCommands()
			sh := newShell(env, true, "sh", 0)
			sh.args = tc.args
			var out strings.Builder
			sh.run(context.Background(), tc.line, stdio{in: strings.NewReader(""), out: &out, err: &out})
			recs := srv.Commands()
			if len(recs) != 1 || !reflect.DeepEqual(recs[0].Argv, tc.want) {
				t.Fatalf("records = %+v, want one with argv %q", recs, tc.want)
			}
		})
	}
}

func TestSudoAndPrivileges(t *testing.T) {
	e := startEnv(t, nil)
	const noTTY = "sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\n"
	cases := []struct {
		user, cmd      string
		stdout, stderr string
		code           int
	}{
		{"alice", "whoami", "alice\n", "", 0},
		{"alice", "id -u", "1000\n", "", 0},
		{"alice", "id", "uid=1000(alice) gid=1000(alice) groups=1000(alice)\n", "", 0},
		{"alice", "zfs list", "tank\n", "", 0},
		{"alice", "zfs create -p tank/a", "", "cannot create 'tank/a': permission denied\n", 1},
		{"alice", "zfs set x:y=z tank", "", "cannot set property for 'tank': permission denied\n", 1},
		{"alice", "sudo zfs create tank/a", "", noTTY + "sudo: a password is required\n", 1},
		{"alice", "sudo -n zfs create tank/a", "", "sudo: a password is required\n", 1},
		{"bob", "whoami", "bob\n", "", 0},
		{"bob", "sudo whoami", "root\n", "", 0},
		{"bob", "/usr/bin/sudo -n id -u", "0\n", "", 0},
		{"bob", "sudo /sbin/zfs create tank/b", "", "", 0},
		{"bob", "sudo nosuch", "", "sudo: nosuch: command not found\n", 1},
		{"bob", "sudo", "", "usage: sudo -h | -K | -k | -V\nusage: sudo -v [-ABkNnS] [-g group] [-h host] [-p prompt] [-u user]\n", 1},
		{"bob", "sudo -q true", "", "sudo: invalid option -- 'q'\nusage: sudo -h | -K | -k | -V\n", 1},
		{"bob", "chroot / whoami", "", "chroot: cannot change root directory to '/': Operation not permitted\n", 125},
		{"bob", "sudo /usr/sbin/chroot / /sbin/zfs create tank/c", "", "", 0},
		{"root", "chroot /nonexistent true", "", "chroot: cannot change root directory to '/nonexistent': No such file or directory\n", 125},
		{"root", "chroot / nosuch", "", "chroot: failed to run command 'nosuch': No such file or directory\n", 127},
		{"carol", "echo $0; nosuch", "bash\n", "bash: line 1: nosuch: command not found\n", 127},
	}
	for _, tc := range cases {
		t.Run(tc.user+" "+tc.cmd, func(t *testing.T) {
			r := e.runAs(tc.user, tc.cmd)
			if r.err != nil || r.stdout != tc.stdout || r.stderr != tc.stderr || r.code != tc.code {
				t.Fatalf("%s: %q = %+v\nwant stdout %q stderr %q code %d", tc.user, tc.cmd, r, tc.stdout, tc.stderr, tc.code)
			}
		})
	}
	for _, ds := range []string{"tank/b", "tank/c"} {
		if !e.host.has(ds) {
			t.Errorf("%s was not created through sudo", ds)
		}
	}
	if e.host.has("tank/a") {
		t.Error("tank/a was created without privileges")
	}
}

func TestNestedShells(t *testing.T) {
	e := startEnv(t, nil)
	cases := []struct {
		cmd            string
		stdout, stderr string
		code           int
		depths         []int // depth of each record, in start order
	}{
		{`sh -c 'echo "$0 $1"' name arg`, "name arg\n", "", 0, []int{0, 1}},
		{`sh -c "sh -c 'echo deep; exit 7'"`, "deep\n", "", 7, []int{0, 1, 2, 2}},
		{`/bin/sh -c 'nosuch'`, "", "sh: 1: nosuch: not found\n", 127, []int{0, 1}},
		{`bash -c 'nosuch'`, "", "bash: line 1: nosuch: command not found\n", 127, []int{0, 1}},
		{`sh -c`, "", "sh: 0: -c requires an argument\n", 2, []int{0}},
		{`sh -x`, "", "sh: 0: Illegal option -x\n", 2, []int{0}},
		{`echo 'echo piped; exit 9' | sh`, "piped\n", "", 9, nil},
		{`sh -c 'echo a | cat'`, "a\n", "", 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			e.srv.ResetCommands()
			r := e.run(tc.cmd)
			if r.err != nil || r.stdout != tc.stdout || r.stderr != tc.stderr || r.code != tc.code {
				t.Fatalf("run(%q) = %+v, want stdout %q stderr %q code %d", tc.cmd, r, tc.stdout, tc.stderr, tc.code)
			}
			if tc.depths != nil {
				var got []int
				for _, rec := range e.srv.Commands() {
					got = append(got, rec.Depth)
				}
				if !reflect.DeepEqual(got, tc.depths) {
					t.Fatalf("record depths = %v, want %v", got, tc.depths)
				}
			}
		})
	}
}

func TestPipelineStreams(t *testing.T) {
	e := startEnv(t, nil)
	// democratic-csi's detached copy: sh -c 'sudo zfs send ... | sudo zfs receive ...'.
	r := runOn(t, e.client("bob"), `/bin/sh -c '/usr/bin/sudo zfs send tank/a@s | /usr/bin/sudo zfs receive tank/b'`, "", false)
	if r.code != 0 || r.err != nil {
		t.Fatalf("send | receive = %+v", r)
	}
	e.host.mu.Lock()
	got := string(e.host.data["tank/b"])
	e.host.mu.Unlock()
	if got != strings.Repeat("a", 1000)+strings.Repeat("b", 1000) {
		t.Fatalf("received %d bytes, want both chunks", len(got))
	}
	// The exit status of a pipeline is the last command's.
	if r := e.run("false | true"); r.code != 0 {
		t.Fatalf("false | true = %d", r.code)
	}
	if r := e.run("true | false"); r.code != 1 {
		t.Fatalf("true | false = %d", r.code)
	}
	// A reader that exits early does not hang the writer.
	if r := e.run("cat /dev/null | true; echo done"); r.stdout != "done\n" {
		t.Fatalf("early reader: %+v", r)
	}
}

func TestFileCommands(t *testing.T) {
	e := startEnv(t, func(o *Options) {
		o.Files = map[string]string{"/var/run/seeded": "hello\n"}
	})
	volDir := e.host.addFS(t, "tank/vol")
	cases := []struct {
		user, cmd      string
		stdout, stderr string
		code           int
	}{
		{"root", "test -f /var/run/nvmet-config-loaded", "", "", 1},
		{"root", "test -f /run/seeded && cat /var/run/seeded", "hello\n", "", 0},
		{"root", "touch /var/run/nvmet-config-loaded && test -f /run/nvmet-config-loaded", "", "", 0},
		{"root", "[ -e /dev/null ] && [ -c /dev/null ] && [ ! -f /dev/null ]", "", "", 0},
		{"root", "[ -d /tank/vol ] && test -d /tank", "", "", 0},
		{"root", "[ -f /tank/vol", "", "sh: 1: [: missing ]\n", 2},
		{"root", "test 1 -eq x", "", "sh: 1: test: Illegal number: x\n", 2},
		{"root", `test "" || test -n a -a -z ""`, "", "", 0},
		{"root", "mkdir -p /tmp/a/b && test -d /tmp/a/b && mkdir /tmp/a", "", "mkdir: cannot create directory '/tmp/a': File exists\n", 1},
		{"root", "mkdir /nonexistent/a", "", "mkdir: cannot create directory '/nonexistent/a': No such file or directory\n", 1},
		{"root", "echo data > /tmp/f; echo more >> /tmp/f; cat /tmp/f", "data\nmore\n", "", 0},
		{"root", "cat /nonexistent", "", "cat: /nonexistent: No such file or directory\n", 1},
		{"root", "cat < /nonexistent", "", "sh: 1: cannot open /nonexistent: No such file\n", 2},
		{"root", "echo x > /nonexistent/f", "", "sh: 1: cannot create /nonexistent/f: Directory nonexistent\n", 2},
		{"root", "chmod 0770 /tank/vol", "", "", 0},
		{"root", "chmod u+s,g-w /tmp/f && test -u /tmp/f", "", "", 0},
		{"root", "chmod 777 /nonexistent", "", "chmod: cannot access '/nonexistent': No such file or directory\n", 1},
		{"root", "chmod abc /tmp/f", "", "chmod: invalid mode: 'abc'\nTry 'chmod --help' for more information.\n", 1},
		{"root", "chmod 755", "", "chmod: missing operand after '755'\nTry 'chmod --help' for more information.\n", 1},
		{"root", "chown 4242:nogroup /tank/vol", "", "", 0},
		{"root", "chown nosuchuser /tank/vol", "", "chown: invalid user: 'nosuchuser'\n", 1},
		{"root", "chown : /tank/vol", "", "", 0},
		{"root", "setfacl -m u:1000:rwx,g::r-x /tank/vol", "", "", 0},
		{"root", "setfacl -m bogus /tank/vol", "", "setfacl: Option -m: Invalid argument near character 1\n", 2},
		{"root", "setfacl -m u:1000:rwx /tank/missing", "", "setfacl: /tank/missing: No such file or directory\n", 1},
		{"root", "nfs4_setfacl -a A::OWNER@:rwaDxtTnNcCy /tank/vol", "", "", 0},
		{"alice", "chmod 777 /tank/vol", "", "chmod: changing permissions of '/tank/vol': Operation not permitted\n", 1},
		{"alice", "chown alice /tank/vol", "", "chown: changing ownership of '/tank/vol': Operation not permitted\n", 1},
		{"alice", "setfacl -m u:1:r /tank/vol", "", "setfacl: /tank/vol: Operation not permitted\n", 1},
		{"alice", "touch /var/run/x", "", "touch: cannot touch '/var/run/x': Permission denied\n", 1},
		{"alice", "echo x > /etc/x", "", "sh: 1: cannot create /etc/x: Permission denied\n", 2},
		{"alice", "touch /tmp/alice && chmod 600 /tmp/alice && test -O /tmp/alice", "", "", 0},
		{"bob", "sudo chmod 0700 /tank/vol && sudo chown bob /tank/vol", "", "", 0},
		{"root", "uname", "Linux\n", "", 0},
		{"root", "uname -s; uname -r", "Linux\n6.1.0-28-amd64\n", "", 0},
		{"root", "uname -a", "Linux zfs-sim 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22) x86_64 GNU/Linux\n", "", 0},
		{"root", "uname -z", "", "uname: invalid option -- 'z'\nTry 'uname --help' for more information.\n", 1},
		{"root", "sleep x", "", "sleep: invalid time interval 'x'\nTry 'sleep --help' for more information.\n", 1},
		{"root", "sleep 0.01 && echo slept", "slept\n", "", 0},
		{"root", `echo -n a; echo 'b\tc'; /bin/echo 'b\tc'; /bin/echo -e 'x\ty'`, "ab\tc\nb\\tc\nx\ty\n", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.user+" "+tc.cmd, func(t *testing.T) {
			r := e.runAs(tc.user, tc.cmd)
			if r.err != nil || r.stdout != tc.stdout || r.stderr != tc.stderr || r.code != tc.code {
				t.Fatalf("%s: %q = %+v\nwant stdout %q stderr %q code %d", tc.user, tc.cmd, r, tc.stdout, tc.stderr, tc.code)
			}
		})
	}
	st, err := os.Stat(volDir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("real directory mode = %o, want 0700 (bob's sudo chmod)", st.Mode().Perm())
	}
	f, ok := e.srv.File("/tank/vol")
	if !ok || f.UID != 1001 || f.GID != 65534 || len(f.ACL) != 2 {
		t.Errorf("File(/tank/vol) = %+v, want uid 1001 (bob), gid 65534, two ACL changes", f)
	}
	if f, ok := e.srv.File("/run/nvmet-config-loaded"); !ok || f.Dir {
		t.Errorf("marker file missing: %+v", f)
	}
	// Writes to a dataset path land in the real directory.
	if r := e.run("echo inside > /tank/vol/file"); r.code != 0 {
		t.Fatalf("write into dataset: %+v", r)
	}
	if data, err := os.ReadFile(filepath.Join(volDir, "file")); err != nil || string(data) != "inside\n" {
		t.Fatalf("real file = %q, %v", data, err)
	}
}

func TestCustomPaths(t *testing.T) {
	e := startEnv(t, func(o *Options) {
		o.Paths = map[string]string{"/opt/zfs/bin/zfs": "zfs", "/bin/sh": "sh"}
	})
	if r := e.run("/opt/zfs/bin/zfs list"); r.code != 0 || r.stdout != "tank\n" {
		t.Fatalf("absolute custom path: %+v", r)
	}
	// Not on PATH, and /sbin/zfs is not in this table.
	for _, cmd := range []string{"zfs list", "/sbin/zfs list"} {
		if r := e.run(cmd); r.code != 127 {
			t.Fatalf("%q = %+v, want 127", cmd, r)
		}
	}
	// Builtins need no table entry.
	if r := e.run("echo ok; test -d /"); r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("builtins: %+v", r)
	}
}

func TestStatePersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	host := newFakeHost(t)
	o := Options{Host: host, Users: defaultUsers(), StateDir: dir}
	e := startWith(t, host, o)
	if r := e.run("touch /run/marker; mkdir -p /etc/custom; echo x > /etc/custom/f"); r.code != 0 {
		t.Fatalf("setup: %+v", r)
	}
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := startWith(t, host, o)
	if r := e2.run("test -f /var/run/marker && cat /etc/custom/f"); r.code != 0 || r.stdout != "x\n" {
		t.Fatalf("after restart: %+v", r)
	}
}
