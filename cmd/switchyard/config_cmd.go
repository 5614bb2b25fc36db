package main

import (
	"fmt"
	"io"

	"github.com/switchyard-csi/switchyard/driver/assembly"
)

// configCmd is `switchyard config check <main.yaml>`: exit 0 when the main
// config and every connection file are usable, else 1 with one line per
// problem ("<file>: <key>: <what is wrong>"); warnings are printed too
// but do not fail it.
func configCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "check" {
		fmt.Fprintln(stderr, "usage: switchyard config check <main-config.yaml>")
		return 2
	}
	file := args[1]
	ps := assembly.Check(file)
	for _, p := range ps {
		fmt.Fprintln(stdout, p.Error())
	}
	if len(ps.Failures()) > 0 {
		return 1
	}
	// Warnings ("warning: ..." lines) point at what works but trusts more
	// than the user may think; they do not fail the check.
	fmt.Fprintf(stdout, "%s: ok\n", file)
	return 0
}
