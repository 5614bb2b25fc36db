package zfsmodel

import (
	"strings"
	"testing"
)

func TestNameCheck(t *testing.T) {
	long := "tank/" + strings.Repeat("a", 260)
	cases := []struct {
		name  string
		types Type
		want  string
	}{
		{"tank/a", Filesystem, ""},
		{"tank/a b:c.d-e_f", Filesystem, ""},
		{"tank/a@snap", Snapshot, ""},
		{"tank/a$b", Filesystem, "invalid character '$' in name"},
		{"tank/a*", Filesystem, "invalid character '*' in name"},
		{"tank/a@b", Filesystem, "snapshot delimiter '@' is not expected here"},
		{"tank/a", Snapshot, "missing '@' delimiter in snapshot name"},
		{"tank/a#b", Filesystem, "bookmark delimiter '#' is not expected here"},
		{"/tank/a", Filesystem, "leading slash in name"},
		{"tank/a/", Filesystem, "trailing slash in name"},
		{"tank//a", Filesystem, "empty component or misplaced '@' or '#' delimiter in name"},
		{"", Filesystem, "empty component or misplaced '@' or '#' delimiter in name"},
		{"tank/./a", Filesystem, "self reference, '.' is found in name"},
		{"tank/../a", Filesystem, "parent reference, '..' is found in name"},
		{"tank/a@b@c", Snapshot, "multiple '@' and/or '#' delimiters in name"},
		{"tank/a@", Snapshot, "empty component or misplaced '@' or '#' delimiter in name"},
		{"tank/a@b/c", Snapshot, "trailing slash in name"},
		{long[:255], Filesystem, ""},
		{long[:256], Filesystem, "name is too long"},
	}
	for _, c := range cases {
		if got := nameCheck(c.name, c.types, true); got != c.want {
			t.Errorf("nameCheck(%q, %v) = %q, want %q", c.name, c.types, got, c.want)
		}
	}
	if got := nameCheck("tank/a%b", Filesystem, true); got != "invalid character % in name" {
		t.Errorf("modifying with %%: %q", got)
	}
	if got := nameCheck("tank/a%b", Filesystem, false); got != "" {
		t.Errorf("opening with %%: %q", got)
	}
}

func TestNiceNum(t *testing.T) {
	cases := []struct {
		n     uint64
		bytes bool
		want  string
	}{
		{0, true, "0B"}, {0, false, "0"}, {512, true, "512B"}, {1023, false, "1023"},
		{1024, true, "1K"}, {98304, true, "96K"}, {1536, true, "1.50K"}, {10239, true, "10.0K"},
		{1 << 30, true, "1G"}, {1610612736, true, "1.50G"}, {1073643520, true, "1024M"},
		{109182976, true, "104M"}, {123456789, true, "118M"}, {5 << 40, false, "5T"},
		{1<<63 + 1<<62, true, "12E"},
	}
	for _, c := range cases {
		if got := niceNum(c.n, c.bytes); got != c.want {
			t.Errorf("niceNum(%d, %v) = %q, want %q", c.n, c.bytes, got, c.want)
		}
	}
}

func TestParseNiceNum(t *testing.T) {
	cases := []struct {
		in   string
		want uint64
		aux  string
	}{
		{"1073741824", 1 << 30, ""}, {"1G", 1 << 30, ""}, {"1g", 1 << 30, ""}, {"512M", 512 << 20, ""},
		{"16K", 16384, ""}, {"1.5G", 3 << 29, ""}, {"1GB", 1 << 30, ""}, {"1GiB", 1 << 30, ""},
		{"100B", 100, ""}, {"0", 0, ""},
		{"abc", 0, "bad numeric value 'abc'"}, {"", 0, "bad numeric value ''"},
		{"1X", 0, "invalid numeric suffix 'X'"}, {"1BB", 0, "invalid numeric suffix 'BB'"},
		{"16E", 0, "numeric value is too large"}, {"99999999999999999999", 0, "numeric value is too large"},
	}
	for _, c := range cases {
		got, aux := parseNiceNum(c.in)
		if got != c.want || aux != c.aux {
			t.Errorf("parseNiceNum(%q) = %d, %q; want %d, %q", c.in, got, aux, c.want, c.aux)
		}
	}
}

func TestGetopt(t *testing.T) {
	opts, ops := getopt([]string{"-Hp", "tank/a", "-o", "name,used", "-d1", "--", "-r"}, "HS:d:o:prs:t:")
	var got []string
	for _, o := range opts {
		got = append(got, string(o.c)+"="+o.arg)
	}
	if strings.Join(got, " ") != "H= p= o=name,used d=1" || strings.Join(ops, " ") != "tank/a -r" {
		t.Fatalf("opts %v operands %v", got, ops)
	}
	opts, _ = getopt([]string{"-x", "-o"}, ":o:")
	if opts[0].c != '?' || opts[0].bad != 'x' || opts[1].c != ':' || opts[1].bad != 'o' {
		t.Fatalf("errors: %+v", opts)
	}
	opts, _ = getopt([]string{"-o"}, "o:")
	if opts[0].c != '?' || opts[0].bad != 'o' {
		t.Fatalf("missing arg without ':': %+v", opts)
	}
}
