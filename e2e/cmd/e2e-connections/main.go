// Command e2e-connections writes the data path's connection files, one
// <connection>.yaml per backend family the lab has, into a folder: `make
// e2e` puts them into the Secret the chart mounts, so the driver has them
// from its start.
//
//	go run ./cmd/e2e-connections -lab lab.json -out DIR [-hostpath-base /var/lib/csi-local-hostpath]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchyard-csi/switchyard/e2e/backends"
)

func main() {
	labFile := flag.String("lab", os.Getenv("E2E_LAB_FILE"), "the lab file (E2E_LAB_FILE); empty: local-hostpath only")
	out := flag.String("out", "", "folder to write the files to (required)")
	base := flag.String("hostpath-base", "/var/lib/csi-local-hostpath", "local-hostpath's base as the driver sees it (E2E_HOSTPATH_BASE)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "e2e-connections: -out is required")
		os.Exit(2)
	}
	lab, err := backends.LoadLab(*labFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e-connections:", err)
		os.Exit(1)
	}
	env := &backends.Env{Lab: lab, HostPathBase: *base, HostPathHostBase: *base}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-connections:", err)
		os.Exit(1)
	}
	for _, fam := range backends.Families() {
		if ok, why := fam.Available(env); !ok {
			fmt.Printf("%-20s skipped: %s\n", fam.Name, why)
			continue
		}
		// The data path's connection, and the handle-limit suite's: the
		// documented safe length and, where a handle can overflow, the
		// longest name allowed.
		conns := []string{"e2e-" + fam.Short, fam.SafeName()}
		if fam.OverLimit != "" {
			conns = append(conns, fam.LongName())
		}
		for _, conn := range conns {
			if err := os.WriteFile(filepath.Join(*out, conn+".yaml"), []byte(backends.ConnectionFile(env, fam, conn)), 0o600); err != nil {
				fmt.Fprintln(os.Stderr, "e2e-connections:", err)
				os.Exit(1)
			}
			fmt.Printf("%-20s %s.yaml\n", fam.Name, conn)
		}
	}
}
