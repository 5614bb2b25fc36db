package truenas

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// registerSystem adds the system.* methods drivers read.
func (s *Server) registerSystem() {
	booted := time.Now()
	static := func(v any) middleware.Handler {
		return func(*middleware.Call, []json.RawMessage) (any, error) { return v, nil }
	}
	s.reg.Add(middleware.Method{Name: "system.version", Handler: static(s.version.Product())})
	if s.version.AtLeast(25, 4, 0) {
		s.reg.Add(middleware.Method{Name: "system.version_short", Handler: static(s.version.String())})
	}
	s.reg.Add(middleware.Method{Name: "system.ready", Handler: static(true)})
	s.reg.Add(middleware.Method{Name: "system.state", Handler: static("READY")})
	s.reg.Add(middleware.Method{Name: "system.host_id", Handler: static(s.hostID)})
	s.reg.Add(middleware.Method{Name: "system.info", Handler: func(*middleware.Call, []json.RawMessage) (any, error) {
		now := time.Now()
		up := now.Sub(booted)
		return map[string]any{
			"version":             s.version.Product(),
			"buildtime":           dateOf(booted.Add(-24 * time.Hour)),
			"hostname":            s.opts.Hostname,
			"physmem":             int64(16) << 30,
			"model":               "Switchyard TrueNAS simulator",
			"cores":               4,
			"physical_cores":      4,
			"loadavg":             []float64{0, 0, 0},
			"uptime":              up.Truncate(time.Second).String(),
			"uptime_seconds":      up.Seconds(),
			"system_serial":       strings.ToUpper(s.hostID[:12]),
			"system_product":      "SIMULATOR",
			"system_manufacturer": "switchyard",
			"license":             nil,
			"boottime":            dateOf(booted),
			"datetime":            dateOf(now),
			"timezone":            "UTC",
			"ecc_memory":          false,
		}, nil
	}})
}

// registerBuiltins adds the methods the server itself implements.
func (s *Server) registerBuiltins() error {
	s.registerCore()
	s.registerAuth()
	s.registerSystem()
	return s.registerServiceMethods()
}

// loadHostID keeps system.host_id stable across restarts.
func loadHostID(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err == nil && len(strings.TrimSpace(string(data))) == 64 {
		return strings.TrimSpace(string(data)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("truenas: %w", err)
	}
	b := make([]byte, 32)
	rand.Read(b)
	id := hex.EncodeToString(b)
	if err := os.WriteFile(file, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("truenas: %w", err)
	}
	return id, nil
}
