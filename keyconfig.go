package ratelimit

// A key function that can key no request (KeyByIP with a prefix length
// out of range, KeyByHeader of no header name, KeyByContext of a key no
// context holds, FirstOf or Compose of no parts or a nil one) is bad
// configuration: New and inflight.New report it at start-up, and one
// given to a single call fails every request with it.

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
)

// badKeyFunc is the KeyFunc of an extractor given bad options: it fails
// every request with err, wrapped as bad configuration.
func badKeyFunc(err error) KeyFunc {
	return failingKey(configError("ratelimit: bad configuration: ", err, ErrBadConfig))
}

// failingKey is a KeyFunc that fails every request with err. It is never
// inlined, so that every KeyFunc it makes runs one function, which
// badKeyFuncError recognises.
//
//go:noinline
func failingKey(err error) KeyFunc {
	return func(*http.Request) (string, error) { return "", err }
}

// badKeyCode is the code of the KeyFuncs failingKey makes.
var badKeyCode = reflect.ValueOf(failingKey(errors.New(""))).Pointer()

// badKeyFuncError is the error of f if failingKey made it (an extractor given
// bad options), else nil: f is called only then, and reads no request.
func badKeyFuncError(f KeyFunc) error {
	if f == nil || reflect.ValueOf(f).Pointer() != badKeyCode {
		return nil
	}
	_, err := f(nil)
	return err
}

// partsError is the error of a composition what ("FirstOf") of no parts,
// or of its first of n parts that is nil or given bad options, else nil; part
// reports whether part i is nil, and the part as a KeyFunc if it is one.
func partsError(what string, n int, part func(i int) (isNil bool, f KeyFunc)) error {
	if n == 0 { // it could key no request
		return configError("ratelimit: bad configuration: ", fmt.Errorf("%s(): no key functions", what), ErrBadConfig)
	}
	for i := range n {
		isNil, f := part(i)
		if isNil {
			return configError("ratelimit: bad configuration: ", fmt.Errorf("%s: key function %d of %d is nil", what, i+1, n), ErrBadConfig)
		}
		if err := badKeyFuncError(f); err != nil {
			return err
		}
	}
	return nil
}

// asKeyFunc is f as a KeyFunc, if it is one; else nil.
func asKeyFunc(f any) KeyFunc {
	switch f := f.(type) {
	case KeyFunc:
		return f
	case func(*http.Request) (string, error):
		return f
	}
	return nil
}
