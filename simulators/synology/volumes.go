package synology

import "strconv"

func init() {
	register("SYNO.Core.Storage.Volume", "entry.cgi", 1, false, map[string]handler{"list": volumeList, "get": volumeGet})
}

// volumeJSON is a volume as DSM lists it: sizes are decimal strings.
func (s *Server) volumeJSON(v *volume, i int) map[string]any {
	free := v.Size - s.st.used(v.Path)
	if free < 0 {
		free = 0
	}
	return map[string]any{
		"display_name": "Volume " + itoa(i+1), "volume_path": v.Path, "status": "normal", "fs_type": v.FSType,
		"size_total_byte": strconv.FormatInt(v.Size, 10), "size_free_byte": strconv.FormatInt(free, 10),
		"container": "internal", "location": "internal", "readonly": false,
	}
}

func volumeList(s *Server, _ *call) (any, error) {
	out := []map[string]any{}
	for i, v := range s.st.Volumes {
		out = append(out, s.volumeJSON(v, i))
	}
	return map[string]any{"volumes": out, "total": len(out), "offset": 0}, nil
}

func volumeGet(s *Server, c *call) (any, error) {
	p := c.str("volume_path")
	for i, v := range s.st.Volumes {
		if v.Path == p {
			return map[string]any{"volume": s.volumeJSON(v, i)}, nil
		}
	}
	return nil, fail(codeInvalidParam)
}
