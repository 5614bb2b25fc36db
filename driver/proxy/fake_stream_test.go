package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/transfer"
)

// A fake with fake.stream set can send and receive streams of that
// format: the stream of volume id X is streamSize bytes of "X;" repeated,
// and a received volume keeps what it received.
type fakeStreamDriver struct {
	*fakeDriver
	format string
	size   int64
	gate   chan struct{} // when set, a send waits for it after the first byte
}

var streams = struct {
	sync.Mutex
	received map[string][]byte // label/name → bytes
	gates    map[string]chan struct{}
}{received: map[string][]byte{}, gates: map[string]chan struct{}{}}

func wrapStream(f *fakeDriver, t config.Tree) backend.Driver {
	format, _ := t.String("fake.stream")
	if format == "" {
		return f
	}
	d := &fakeStreamDriver{fakeDriver: f, format: format, size: 1 << 20}
	if g, _ := t.String("fake.gate"); g != "" {
		streams.Lock()
		if streams.gates[g] == nil {
			streams.gates[g] = make(chan struct{})
		}
		d.gate = streams.gates[g]
		streams.Unlock()
	}
	return d
}

func openGate(name string) {
	streams.Lock()
	defer streams.Unlock()
	close(streams.gates[name])
	delete(streams.gates, name) // a later run of the test gets a new gate
}

func (d *fakeStreamDriver) StreamFormat() string {
	if d.format == "none" {
		return ""
	}
	return d.format
}

func (d *fakeStreamDriver) SendSource(_ context.Context, src *csipb.VolumeContentSource, _ string) (transfer.Source, int64, func(), error) {
	id := src.GetVolume().GetVolumeId()
	if s := src.GetSnapshot(); s != nil {
		id = s.GetSnapshotId()
	}
	return &fakeSource{id: id, size: d.size, gate: d.gate}, d.size, func() {}, nil
}

type fakeSource struct {
	id   string
	size int64
	gate chan struct{}
}

func (s *fakeSource) Send(ctx context.Context, w io.Writer, _ string) error {
	unit := []byte(s.id + ";")
	var sent int64
	for sent < s.size {
		n := min(int64(len(unit)), s.size-sent)
		if _, err := w.Write(unit[:n]); err != nil {
			return err
		}
		sent += n
		if s.gate != nil && sent == n {
			select {
			case <-s.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

func (d *fakeStreamDriver) ReceiveVolume(_ context.Context, req *csipb.CreateVolumeRequest) (transfer.Sink, func(context.Context) (*csipb.CreateVolumeResponse, error), error) {
	key := d.label + "/" + req.GetName()
	sink := &fakeSink{key: key}
	finish := func(ctx context.Context) (*csipb.CreateVolumeResponse, error) { return d.CreateVolume(ctx, req) }
	return sink, finish, nil
}

type fakeSink struct{ key string }

func (k *fakeSink) Receive(_ context.Context, r io.Reader) error {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		return err
	}
	streams.Lock()
	streams.received[k.key] = buf.Bytes()
	streams.Unlock()
	return nil
}
func (k *fakeSink) ResumeToken(context.Context) (string, error) { return "", nil }
func (k *fakeSink) Abort(context.Context) error {
	streams.Lock()
	delete(streams.received, k.key)
	streams.Unlock()
	return nil
}

func receivedBy(label, name string) []byte {
	streams.Lock()
	defer streams.Unlock()
	return streams.received[fmt.Sprintf("%s/%s", label, name)]
}
