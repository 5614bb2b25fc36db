package api

import "testing"

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in         string
		want       Version
		wantString string
	}{
		{"TrueNAS-SCALE-24.10.2", Version{24, 10, 2, "TrueNAS-SCALE"}, "TrueNAS-SCALE-24.10.2"},
		{"TrueNAS-25.04.2", Version{25, 4, 2, "TrueNAS"}, "TrueNAS-25.04.2"},
		{`"TrueNAS-25.10.1"`, Version{25, 10, 1, "TrueNAS"}, "TrueNAS-25.10.1"},
		{"TrueNAS-26.04.0", Version{26, 4, 0, "TrueNAS"}, "TrueNAS-26.04.0"},
		{"TrueNAS-SCALE-24.10.2.1", Version{24, 10, 2, "TrueNAS-SCALE"}, "TrueNAS-SCALE-24.10.2"},
		{"TrueNAS-SCALE-24.10-MASTER-20240901", Version{24, 10, 0, "TrueNAS-SCALE"}, "TrueNAS-SCALE-24.10.0"},
		{"TrueNAS-13.0-U6.1", Version{13, 0, 6, "TrueNAS"}, "TrueNAS-13.0.6"},
		{"FreeNAS-11.3-U5", Version{11, 3, 5, "FreeNAS"}, "FreeNAS-11.3.5"},
		{"25.04.2", Version{25, 4, 2, ""}, "25.04.2"},
	}
	for _, tt := range tests {
		got, err := ParseVersion(tt.in)
		if err != nil {
			t.Errorf("ParseVersion(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseVersion(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.wantString {
			t.Errorf("String() = %q, want %q", s, tt.wantString)
		}
	}
	for _, bad := range []string{"", "TrueNAS", "SCALE-x.y"} {
		if v, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) = %+v, want an error", bad, v)
		}
	}
}

func TestVersionAtLeast(t *testing.T) {
	v := Version{Year: 25, Month: 4, Patch: 2}
	tests := []struct {
		y, m, p int
		want    bool
	}{
		{25, 4, 2, true}, {25, 4, 1, true}, {25, 4, 3, false}, {25, 10, 0, false},
		{24, 10, 9, true}, {26, 0, 0, false}, {25, 3, 99, true},
	}
	for _, tt := range tests {
		if got := v.AtLeast(tt.y, tt.m, tt.p); got != tt.want {
			t.Errorf("%v.AtLeast(%d,%d,%d) = %v, want %v", v, tt.y, tt.m, tt.p, got, tt.want)
		}
	}
}
