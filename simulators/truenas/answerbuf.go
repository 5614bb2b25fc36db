package truenas

import "sync"

// answerBuffers hold the bytes of answers being written. Encoding an
// answer into a fresh 512-byte buffer grew it by doubling, five
// allocations and ~30 KB for a dataset entry, and the WebSocket answer
// then copied it into its message: a quarter of the bytes the simulator
// allocated per create + delete pair (issue 16, seventh round). A buffer
// goes back once the transport's Write has returned: the WebSocket and
// net/http both copy or send what they are given before returning.
var answerBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 16<<10)
	return &b
}}

// maxPooledAnswer bounds what the pool keeps: a rare huge answer (a query
// of every dataset) is left to the GC rather than held.
const maxPooledAnswer = 1 << 20

// getAnswerBuffer returns an empty buffer; putAnswerBuffer takes it back
// (the caller stores the grown slice in it first).
func getAnswerBuffer() *[]byte {
	b := answerBuffers.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

func putAnswerBuffer(b *[]byte) {
	if cap(*b) <= maxPooledAnswer {
		answerBuffers.Put(b)
	}
}
