package main

import (
	"fmt"
	"io"

	"github.com/switchyard-csi/switchyard/driver/assembly"
)

// configCmd is `switchyard config check <main.yaml>`: exit 0 when the main
// config and every connection file are usable, else 1 with one line per
// problem ("<file>: <key>: <what is wrong>").
func configCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "check" {
		fmt.Fprintln(stderr, "usage: switchyard config check <main-config.yaml>")
		return 2
	}
	ps := assembly.Check(args[1])
	if len(ps) == 0 {
		fmt.Fprintf(stdout, "%s: ok\n", args[1])
		return 0
	}
	for _, p := range ps {
		fmt.Fprintln(stdout, p.Error())
	}
	return 1
}
