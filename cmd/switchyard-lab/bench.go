package main

import (
	"context"
	"fmt"
	"io"
)

func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "bench: not built yet")
	return 1
}
