package benchtable

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestConnectionsLine: the table names the batches in which the simulator
// accepted new TCP connections, and says nothing where none were counted.
func TestConnectionsLine(t *testing.T) {
	tb := Table{Backend: "b", About: "a", Latency: time.Millisecond, Slots: 16, Rows: []Row{
		{Callers: 1, Op: "create", Connections: 3}, {Callers: 1, Op: "delete"}, {Callers: 16, Op: "create", Connections: 13},
	}}
	var out bytes.Buffer
	tb.Write(&out)
	want := "New TCP connections the simulator accepted per batch (the rest kept alive): create at 1 callers 3, create at 16 callers 13.\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("table:\n%s\nwant the line %q", out.String(), want)
	}
	for i := range tb.Rows {
		tb.Rows[i].Connections = 0
	}
	out.Reset()
	tb.Write(&out)
	if strings.Contains(out.String(), "TCP connections") {
		t.Errorf("a connections line without connections counted:\n%s", out.String())
	}
}
