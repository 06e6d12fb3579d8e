// Package status records the status of an HTTP response for a limiter
// that settles a request's cost after its handler: a ResponseWriter
// wrapper that keeps http.Flusher, http.Hijacker and Unwrap (for
// http.ResponseController) exactly when the wrapped writer has them.
package status

import (
	"bufio"
	"net"
	"net/http"
	"sync"
)

// Writer records the status of the response written through it.
type Writer struct {
	http.ResponseWriter
	status   int  // the response's status; 0 while none is written
	reported int  // the status the handler reported (Report); 0 if none
	hijacked bool // the handler took the connection over

	out http.ResponseWriter // the writer handed out: w, or one with Flush and Hijack
	fl  flusher
	hj  hijacker
	fh  flushHijacker
}

// Writer returns the ResponseWriter that Get handed out.
func (w *Writer) Writer() http.ResponseWriter { return w.out }

// WriteHeader records code unless a status is recorded already; 1xx are
// not the response's status.
func (w *Writer) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records 200 if no status is recorded yet.
func (w *Writer) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Report sets the status the response counts as, whatever was written,
// for a handler that answers on a hijacked connection.
func (w *Writer) Report(code int) { w.reported = code }

// Status is the status the response counts as: the one reported, else the
// one written, else 0 (unknown) for a hijacked connection, else ok if the
// handler returned and 500 if it did not (it panicked).
func (w *Writer) Status(returned bool) int {
	switch {
	case w.reported != 0:
		return w.reported
	case w.hijacked:
		return 0
	case w.status != 0:
		return w.status
	case returned:
		return http.StatusOK
	}
	return http.StatusInternalServerError
}

type flusher struct{ *Writer }

func (f flusher) Flush() { flush(f.Writer) }

type hijacker struct{ *Writer }

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) { return hijack(h.Writer) }

type flushHijacker struct{ *Writer }

func (f flushHijacker) Flush() { flush(f.Writer) }

func (f flushHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) { return hijack(f.Writer) }

func flush(w *Writer) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.ResponseWriter.(http.Flusher).Flush()
}

func hijack(w *Writer) (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := w.ResponseWriter.(http.Hijacker).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return c, rw, err
}

var writers = sync.Pool{New: func() any {
	w := new(Writer)
	w.fl.Writer, w.hj.Writer, w.fh.Writer = w, w, w
	return w
}}

// Get returns a Writer over rw from a pool, and the ResponseWriter to
// give the handler: rw's Flush and Hijack are there exactly when rw has
// them. Put it back with Put once the response is done.
func Get(rw http.ResponseWriter) (*Writer, http.ResponseWriter) {
	w := writers.Get().(*Writer)
	w.ResponseWriter, w.status, w.reported, w.hijacked = rw, 0, 0, false
	_, f := rw.(http.Flusher)
	_, h := rw.(http.Hijacker)
	switch {
	case f && h:
		w.out = &w.fh
	case f:
		w.out = &w.fl
	case h:
		w.out = &w.hj
	default:
		w.out = w
	}
	return w, w.out
}

// Put returns w to the pool.
func Put(w *Writer) {
	w.ResponseWriter, w.out = nil, nil
	writers.Put(w)
}

// Find returns the Writer in rw's chain of Unwrap, if any.
func Find(rw http.ResponseWriter) *Writer {
	for rw != nil {
		switch w := rw.(type) {
		case *Writer:
			return w
		case *flusher:
			return w.Writer
		case *hijacker:
			return w.Writer
		case *flushHijacker:
			return w.Writer
		}
		u, ok := rw.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		rw = u.Unwrap()
	}
	return nil
}
