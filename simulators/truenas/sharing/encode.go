package sharing

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// rowEncoder writes a table's file as json.MarshalIndent(rows, "", " ")
// would, byte for byte, but marshals only the rows that changed since its
// last file: encoding a map[string]any costs ~15 µs a row (reflection,
// sorted keys), so a 100-share table cost 1.5 ms of CPU per change, more
// than everything else a share create does. It relies on stored rows
// never being changed in place (store.go): a row whose map is the one
// encoded last time has the same bytes. Each entry keeps its map, so
// the map's address cannot be reused by another row while it is cached.
type rowEncoder struct {
	cache map[int]encodedRow // by row id; rebuilt on every encode
}

type encodedRow struct {
	row middleware.Row
	enc []byte
}

// encode returns the file's contents for rows.
func (e *rowEncoder) encode(rows []middleware.Row) ([]byte, error) {
	if len(rows) == 0 {
		e.cache = nil
		return []byte("[]"), nil
	}
	next := make(map[int]encodedRow, len(rows))
	var buf bytes.Buffer
	buf.WriteString("[\n ")
	for i, r := range rows {
		id := intOf(r["id"])
		c, ok := e.cache[id]
		if !ok || !sameMap(c.row, r) {
			// as MarshalIndent indents an element of the top-level array
			b, err := json.MarshalIndent(r, " ", " ")
			if err != nil {
				return nil, err
			}
			c = encodedRow{row: r, enc: b}
		}
		next[id] = c
		if i > 0 {
			buf.WriteString(",\n ")
		}
		buf.Write(c.enc)
	}
	buf.WriteString("\n]")
	e.cache = next
	return buf.Bytes(), nil
}

// sameMap reports whether a and b are the same map (not equal ones).
func sameMap(a, b middleware.Row) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
