package api

import (
	"bytes"
	"encoding/json"
)

// wireFields are wireMessage's JSON keys.
var wireFields = [...]string{"id", "result", "error", "method"}

// decodeWire decodes a message from the server into a wireMessage, as
// json.Unmarshal would: the same fields, the same errors. An answer's
// result (a dataset entry is ~5 KB) is validated once and stepped over
// once, where json.Unmarshal validated it and then scanned it again to
// copy it out (a tenth of the driver's CPU in a create batch, perf at 16
// callers). Anything but the plain keys goes to json.Unmarshal: a key
// written with escapes or in another case (encoding/json matches struct
// fields case-insensitively), a field of the wrong type.
func decodeWire(data []byte) (wireMessage, error) {
	var m wireMessage
	if !json.Valid(data) {
		return m, json.Unmarshal(data, &m) // its error
	}
	ok := EachField(data, func(key []byte, plain bool, v []byte) bool {
		if !plain {
			return false
		}
		switch string(key) {
		case "id":
			m.ID = v // data is the message's own buffer (websocket.Conn.Read)
		case "result":
			m.Result = v
		case "error": // into the one *wireError, as a repeated key would be
			return json.Unmarshal(v, &m.Error) == nil
		case "method":
			return json.Unmarshal(v, &m.Method) == nil
		default:
			for _, f := range wireFields {
				if bytes.EqualFold(key, []byte(f)) {
					return false
				}
			}
		}
		return true
	})
	if ok {
		return m, nil
	}
	m = wireMessage{}
	err := json.Unmarshal(data, &m)
	return m, err
}
