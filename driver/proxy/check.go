package proxy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// CheckFolder checks every connection file in the folder as the running
// proxy would read it, plus what only shows up later: a connection name
// that lets a handle outgrow CSI's 128 bytes.
func CheckFolder(s *Settings, main config.Tree) config.Problems {
	entries, err := os.ReadDir(s.ConfigFolder)
	if err != nil {
		return config.Problems{{Key: "proxy.configFolder", Msg: err.Error()}}
	}
	var ps config.Problems
	found := 0
	var good []*connConfig
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".yaml")
		if !ok || e.IsDir() || strings.HasPrefix(e.Name(), "..") {
			continue
		}
		file := filepath.Join(s.ConfigFolder, e.Name())
		if err := CheckConnectionName(name); err != nil {
			ps = append(ps, config.Problem{File: file, Msg: fmt.Sprintf("the file name is not a usable connection name: %v", err)})
			continue
		}
		found++
		cc, cps := checkConnectionFile(name, file, main, s)
		ps = append(ps, cps...)
		if cc != nil {
			good = append(good, cc)
		}
	}
	ps = append(ps, checkLabelSets(good)...)
	if found == 0 {
		ps = append(ps, config.Problem{Key: "proxy.configFolder", Msg: fmt.Sprintf("%s holds no <connection>.yaml files; no volume can be created until one is added", s.ConfigFolder)})
	}
	return ps
}

// CheckConnection checks one connection file.
func CheckConnection(name, file string, main config.Tree, s *Settings) config.Problems {
	_, ps := checkConnectionFile(name, file, main, s)
	return ps
}

// checkConnectionFile checks one file and returns it read when usable.
func checkConnectionFile(name, file string, main config.Tree, s *Settings) (*connConfig, config.Problems) {
	tree, err := config.LoadFile(file)
	if err != nil {
		return nil, config.Problems{{File: file, Msg: strings.TrimPrefix(err.Error(), file+": ")}}
	}
	cc, ps, _ := checkConnection(name, file, tree, main, s)
	if len(ps) > 0 {
		return nil, ps
	}
	for _, lim := range []struct {
		prefix, what string
		max          int
	}{{VolumePrefix, "volume", cc.typ.MaxVolumeIDLen}, {SnapshotPrefix, "snapshot", cc.typ.MaxSnapshotIDLen}} {
		if lim.max <= 0 {
			continue
		}
		if n := len(lim.prefix) + len(name) + 1 + lim.max; n > MaxHandleLen {
			ps = append(ps, config.Problem{File: file, Msg: fmt.Sprintf(
				"connection name %q is too long for %s: its %s ids are up to %d bytes, so handles can reach %d bytes (CSI allows %d); use a name of at most %d characters",
				name, cc.typ.Name, lim.what, lim.max, n, MaxHandleLen, MaxHandleLen-len(lim.prefix)-1-lim.max)})
		}
	}
	if len(ps) == 0 && cc.typ.Warnings != nil {
		ps = config.Problems(cc.typ.Warnings(cc.merged)).InFile(file)
	}
	return cc, ps
}
