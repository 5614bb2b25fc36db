package fidelity

import (
	"reflect"
	"strings"
	"testing"
)

// These tests need neither root nor zfs: they check that the comparison
// masks only what it should, so that TestFidelity can fail.

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		args string
		in   Result
		want string // stdout, or stderr for destroy
	}{
		{"get -H masks space and dates, keeps the rest", "get -H -o name,property,value,source used,creation,quota t/a",
			Result{Stdout: "t/a\tused\t364K\t-\nt/a\tcreation\tSat Nov  1 18:49 2026\t-\nt/a\tquota\t10M\tlocal\n"},
			"t/a\tused\t<size>\t-\nt/a\tcreation\t<date>\t-\nt/a\tquota\t10M\tlocal\n"},
		{"get -Hp masks exact numbers", "get -Hp -o name,property,value,source used,creation,guid t/a",
			Result{Stdout: "t/a\tused\t372736\t-\nt/a\tcreation\t1795286993\t-\nt/a\tguid\t13884721080376293344\t-\n"},
			"t/a\tused\t<size>\t-\nt/a\tcreation\t<date>\t-\nt/a\tguid\t<id>\t-\n"},
		{"get -Hp keeps a human size: it is wrong there", "get -Hp used t/a",
			Result{Stdout: "t/a\tused\t1.5M\t-\n"}, "t/a\tused\t1.5M\t-\n"},
		{"get -H keeps an exact date: it is wrong there", "get -H -o name,property,value,source creation t/a",
			Result{Stdout: "t/a\tcreation\t1795286993\t-\n"}, "t/a\tcreation\t1795286993\t-\n"},
		{"get -H keeps malformed space", "get -H used t/a",
			Result{Stdout: "t/a\tused\t364 K\t-\n"}, "t/a\tused\t364 K\t-\n"},
		{"OpenZFS's bytes suffix is a size", "get -H -o name,property,value,source usedbysnapshots t/a",
			Result{Stdout: "t/a\tusedbysnapshots\t0B\t-\n"}, "t/a\tusedbysnapshots\t<size>\t-\n"},
		{"get -o value of one property", "get -H -o value available t/a",
			Result{Stdout: "90.6M\n"}, "<size>\n"},
		{"list -H masks space columns", "list -H -o name,used,avail,refer,mountpoint -r t",
			Result{Stdout: "t\t364K\t90.6M\t112K\t/t\nt@s\t0\t-\t112K\t-\n"},
			"t\t<size>\t<size>\t<size>\t/t\nt@s\t<size>\t-\t<size>\t-\n"},
		{"list without -H: header kept, columns re-joined", "list -r t",
			Result{Stdout: "NAME   USED  AVAIL  REFER  MOUNTPOINT\nt      364K  90.6M   112K  /t\nt/a b  112K  90.6M   112K  /t/a b\n"},
			"NAME\tUSED\tAVAIL\tREFER\tMOUNTPOINT\nt\t<size>\t<size>\t<size>\t/t\nt/a b\t<size>\t<size>\t<size>\t/t/a b\n"},
		{"get without -H: dates with runs of spaces", "get creation,used t/a",
			Result{Stdout: "NAME  PROPERTY  VALUE                  SOURCE\nt/a   creation  Sat Nov  1 18:49 2026  -\nt/a   used      112K                   -\n"},
			"NAME\tPROPERTY\tVALUE\tSOURCE\nt/a\tcreation\t<date>\t-\nt/a\tused\t<size>\t-\n"},
		{"nothing volatile: untouched, alignment included", "list -o name,origin -r t",
			Result{Stdout: "NAME  ORIGIN\nt     -\n"}, "NAME  ORIGIN\nt     -\n"},
		{"a row of another width is left for the comparison", "list -H -o name,used t",
			Result{Stdout: "t\t1K\textra\n"}, "t\t1K\textra\n"},
		{"destroy: dependents sorted", "destroy t/src@s",
			Result{Stderr: "cannot destroy 't/src@s': snapshot has dependent clones\nuse '-R' to destroy the following datasets:\nt/z\nt/deep/a\n"},
			"cannot destroy 't/src@s': snapshot has dependent clones\nuse '-R' to destroy the following datasets:\nt/deep/a\nt/z\n"},
		{"other commands untouched", "create t/a",
			Result{Stderr: "cannot create 't/a': dataset already exists\n"}, "cannot create 't/a': dataset already exists\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := splitWords(tt.args)
			got := Normalize(args, tt.in)
			out := got.Stdout
			if args[0] == "destroy" || args[0] == "create" {
				out = got.Stderr
			}
			if out != tt.want {
				t.Errorf("Normalize(%q):\n got %q\nwant %q", tt.args, out, tt.want)
			}
		})
	}
}

func TestAcceptKnown(t *testing.T) {
	usage := func(first, body string) string { return first + "usage:\n\t" + body + "\n" }
	tests := []struct {
		name      string
		args      string
		exp, got  Result
		ok        bool
		wantNames []string
	}{
		{"reworded name check", "create t//a",
			Result{Stderr: "cannot create 't//a': empty component in name\n", Code: 1},
			Result{Stderr: "cannot create 't//a': empty component or misplaced '@' or '#' delimiter in name\n", Code: 1},
			true, []string{"name check: empty component"}},
		{"same rewording, different exit code", "create t//a",
			Result{Stderr: "cannot create 't//a': empty component in name\n", Code: 1},
			Result{Stderr: "cannot create 't//a': empty component or misplaced '@' or '#' delimiter in name\n", Code: 2},
			false, nil},
		{"a difference beyond the known one", "create t//a",
			Result{Stderr: "cannot create 't//a': empty component in name\n", Code: 1},
			Result{Stderr: "cannot create 't//b': empty component or misplaced '@' or '#' delimiter in name\n", Code: 1},
			false, nil},
		{"a rewrite only for its commands", "rename t/a@b t/c",
			Result{Stderr: "cannot open 't/a@b': dataset does not exist\n", Code: 1},
			Result{Stderr: "could not find any snapshots to destroy; check snapshot names.\n", Code: 1},
			false, nil},
		{"usage bodies differ, the message before them agrees", "get bogus t",
			Result{Stderr: usage("bad property list: invalid property 'bogus'\n", "get [-rHp] old"), Code: 2},
			Result{Stderr: usage("bad property list: invalid property 'bogus'\n", "get [-rHp] [-t type] new"), Code: 2},
			true, []string{"usage text"}},
		{"the message before the usage differs", "get bogus t",
			Result{Stderr: usage("bad property list: invalid property 'bogus'\n", "old"), Code: 2},
			Result{Stderr: usage("invalid property 'bogus'\n", "new"), Code: 2},
			false, nil},
		{"snapshot of a missing dataset: usage and exit 2", "snapshot t/x@s",
			Result{Stderr: "cannot open 't/x': dataset does not exist\n", Code: 1},
			Result{Stderr: usage("cannot open 't/x': dataset does not exist\n", "snapshot ..."), Code: 2},
			true, []string{"snapshot: missing dataset", "usage text"}},
		{"stdout is never rewritten", "list -H -o name t",
			Result{Stdout: "t\n"}, Result{Stdout: "t\nt/a\n"}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names, ok := acceptKnown(splitWords(tt.args), tt.exp, tt.got)
			if ok != tt.ok {
				t.Fatalf("accepted = %v, want %v (rewrites %v)", ok, tt.ok, names)
			}
			if ok && !reflect.DeepEqual(names, tt.wantNames) {
				t.Errorf("rewrites used = %v, want %v", names, tt.wantNames)
			}
		})
	}
}

func TestKnownDifferencesAreDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range knownDifferences {
		if k.name == "" || k.reason == "" || !strings.HasPrefix(k.openzfs, oz) || k.re == nil {
			t.Errorf("known difference %q needs a name, a reason, an OpenZFS source reference and a pattern", k.name)
		}
		if seen[k.name] {
			t.Errorf("known difference %q listed twice", k.name)
		}
		seen[k.name] = true
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"create -p $P/a", []string{"create", "-p", "$P/a"}},
		{"create  '$P/a b$'", []string{"create", "$P/a b$"}},
		{"create ''", []string{"create", ""}},
		{"set a='x y'", []string{"set", "a=x y"}},
	}
	for _, tt := range tests {
		if got := splitWords(tt.line); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitWords(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestBusyScope(t *testing.T) {
	tests := []struct {
		args  string
		scope string
		ok    bool
	}{
		{"destroy t/a/b", "t/a/b", true},
		{"destroy -r -f t/a", "t/a", true},
		{"destroy -R t/a/b", "t", true},
		{"destroy -fR t/a/b", "t", true},
		{"destroy t/a@s", "", false},
		{"rename t/a t/b", "t/a", true},
		{"rename -p t/a t/x/b", "t/a", true},
		{"rename t/a@s t/a@r", "", false},
		{"create t/a", "", false},
		{"destroy", "", false},
	}
	for _, tt := range tests {
		scope, ok := busyScope(splitWords(tt.args))
		if scope != tt.scope || ok != tt.ok {
			t.Errorf("busyScope(%q) = %q, %v; want %q, %v", tt.args, scope, ok, tt.scope, tt.ok)
		}
	}
}
