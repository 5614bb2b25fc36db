package events

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// Reasons of the Events about connection files.
const (
	ReasonConnectionInvalid = "ConnectionFileInvalid"
	ReasonConnectionLoaded  = "ConnectionFileLoaded"
)

var _ proxy.Observer = (*Recorder)(nil)

// ConnectionLoaded: a broken file makes a Warning Event naming the
// connection and the file; the same file fixed later makes a Normal one,
// so the Pod's events tell the whole story.
func (r *Recorder) ConnectionLoaded(name, file string, err error) {
	r.mu.Lock()
	prev, wasBroken := r.broken[name]
	if err != nil {
		r.broken[name] = file
	} else {
		delete(r.broken, name)
	}
	r.mu.Unlock()
	if err != nil {
		// The status message is what calls on the connection now get; it
		// names the problem, never the file's content.
		msg := strings.TrimPrefix(status.Convert(err).Message(), "connection "+name+": ")
		note := fmt.Sprintf("connection %s: file %s is broken and was not loaded (%s); the driver keeps serving its other connections; fix the file in the connections Secret",
			name, file, msg)
		r.Event(ReasonConnectionInvalid+"\x00"+name+"\x00"+file+"\x00"+msg, "Warning", ReasonConnectionInvalid, "LoadConnection", note)
		return
	}
	if wasBroken {
		note := fmt.Sprintf("connection %s: file %s loads again", name, file)
		if prev != file {
			note += " (the broken one was " + prev + ")"
		}
		r.Event(ReasonConnectionLoaded+"\x00"+name+"\x00"+file, "Normal", ReasonConnectionLoaded, "LoadConnection", note)
	}
}

// ConnectionRemoved: a removed file is no longer broken.
func (r *Recorder) ConnectionRemoved(name string) {
	r.mu.Lock()
	delete(r.broken, name)
	r.mu.Unlock()
}
