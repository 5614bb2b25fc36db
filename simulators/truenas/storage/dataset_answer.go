package storage

import (
	"slices"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// datasetAnswer is the entry pool.dataset.create and update answer with
// (get_instance of the dataset with the query's defaults: every property,
// user properties, the children's entries), written as JSON straight from
// the datasets' descriptions. Built as maps, an entry was ~45 maps of
// five fields, one per property, each boxed, sorted by key and encoded,
// and then garbage: the largest part of the simulator's CPU per pair with
// the collection it caused (issue 16, eighth round). A query still reads
// rows as maps (baseEntry); TestDatasetAnswerIsTheEntry compares the two
// encodings byte for byte.
type datasetAnswer struct {
	in       *zfsmodel.Info
	children []*datasetAnswer
}

var _ middleware.Appender = (*datasetAnswer)(nil)

// answerKey is one key of an entry, in the order Encode writes a map's
// keys (byte order), and its value's writer, which tells whether the
// entry has the key at all.
type answerKey struct {
	key   string // `"key":`
	write func(dst []byte, a *datasetAnswer) ([]byte, bool, error)
}

// answerKeys are every key baseEntry may set, sorted. Set by init: the
// writers refer to it (children are entries), a cycle for a variable's
// initializer.
var answerKeys []answerKey

func init() { answerKeys = newAnswerKeys() }

func newAnswerKeys() []answerKey {
	literal := func(v string) func([]byte, *datasetAnswer) ([]byte, bool, error) {
		return func(dst []byte, _ *datasetAnswer) ([]byte, bool, error) { return append(dst, v...), true, nil }
	}
	name := func(dst []byte, a *datasetAnswer) ([]byte, bool, error) {
		dst, err := middleware.AppendEncoded(dst, a.in.Name)
		return dst, true, err
	}
	keys := []answerKey{
		{"id", name}, {"name", name},
		{"pool", func(dst []byte, a *datasetAnswer) ([]byte, bool, error) {
			pool, _, _ := strings.Cut(a.in.Name, "/")
			dst, err := middleware.AppendEncoded(dst, pool)
			return dst, true, err
		}},
		{"type", func(dst []byte, a *datasetAnswer) ([]byte, bool, error) {
			if a.in.Type == zfsmodel.Volume {
				return append(dst, `"VOLUME"`...), true, nil
			}
			return append(dst, `"FILESYSTEM"`...), true, nil
		}},
		{"encrypted", literal("false")}, {"encryption_root", literal("null")},
		{"key_loaded", literal("false")}, {"locked", literal("false")},
		{"children", appendChildren},
		{"mountpoint", func(dst []byte, a *datasetAnswer) ([]byte, bool, error) {
			mp, ok := entryMountpoint(a.in, true)
			if !ok {
				return dst, false, nil
			}
			dst, err := middleware.AppendEncoded(dst, mp)
			return dst, true, err
		}},
		{"user_properties", appendUserProps},
	}
	for _, p := range entryProps {
		keys = append(keys, answerKey{p.api, propWriter(p)})
	}
	slices.SortFunc(keys, func(a, b answerKey) int { return strings.Compare(a.key, b.key) })
	for i := range keys {
		b, _ := middleware.Encode(keys[i].key)
		keys[i].key = string(b) + ":"
	}
	return keys
}

// noOriginJSON is noOrigin encoded.
var noOriginJSON, _ = middleware.Encode(noOrigin())

// propWriter writes entryProps' p as baseEntry does.
func propWriter(p entryProp) func([]byte, *datasetAnswer) ([]byte, bool, error) {
	return func(dst []byte, a *datasetAnswer) ([]byte, bool, error) {
		pv, ok := a.in.Props[p.zfs]
		var err error
		switch {
		case ok && isUserProp(p.zfs):
			dst, err = userPropForms(pv).appendJSON(dst)
		case ok:
			dst, err = propFormsOf(p.zfs, pv, p.xf).appendJSON(dst)
		case p.zfs == "origin":
			dst = append(dst, noOriginJSON...)
		default:
			return dst, false, nil
		}
		return dst, true, err
	}
}

func appendChildren(dst []byte, a *datasetAnswer) ([]byte, bool, error) {
	dst = append(dst, '[')
	for i, c := range a.children {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = c.AppendJSON(dst); err != nil {
			return nil, false, err
		}
	}
	return append(dst, ']'), true, nil
}

// appendUserProps writes user_properties: the user properties that are
// not attributes of their own, by name.
func appendUserProps(dst []byte, a *datasetAnswer) ([]byte, bool, error) {
	var small [16]string
	names := small[:0]
	for k := range a.in.Props {
		if isUserProp(k) && !internalUserProps[k] {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	dst, err := middleware.AppendObject(dst, names, func(dst []byte, k string) ([]byte, error) {
		return userPropForms(a.in.Props[k]).appendJSON(dst)
	})
	return dst, err == nil, err
}

// AppendJSON appends the entry as Encode writes baseEntry's map with its
// children.
func (a *datasetAnswer) AppendJSON(dst []byte) ([]byte, error) {
	sep := byte('{')
	for _, k := range answerKeys {
		mark := len(dst)
		dst = append(dst, sep)
		dst = append(dst, k.key...)
		var ok bool
		var err error
		if dst, ok, err = k.write(dst, a); err != nil {
			return nil, err
		}
		if !ok {
			dst = dst[:mark]
			continue
		}
		sep = ','
	}
	if sep == '{' {
		dst = append(dst, '{')
	}
	return append(dst, '}'), nil
}

// MarshalJSON is AppendJSON, for json.Marshal.
func (a *datasetAnswer) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil) }

// datasetAnswerOf reads name and its descendants as datasetRows does for
// get_instance (measured, every entry property; internal datasets left
// out) and links each to its children's answers; nil when name is not a
// dataset the query would show.
func (s *service) datasetAnswerOf(name string) *datasetAnswer {
	if strings.Contains(name, "@") || isInternal(name) {
		return nil
	}
	names, err := s.m.List(name, true, zfsmodel.Filesystem|zfsmodel.Volume)
	if err != nil {
		return nil
	}
	answers := make(map[string]*datasetAnswer, len(names))
	for _, n := range names {
		if isInternal(n) {
			continue
		}
		in, err := s.m.GetProps(n, entryPropNames...)
		if err != nil {
			continue // destroyed meanwhile
		}
		answers[n] = &datasetAnswer{in: in}
	}
	for _, a := range answers {
		for _, k := range a.in.Children {
			if c, ok := answers[k]; ok {
				a.children = append(a.children, c)
			}
		}
	}
	return answers[name]
}
