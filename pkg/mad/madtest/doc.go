// Package madtest provides an in-memory mad.Transport for tests: a function
// from each request sent to the packets to deliver in reply, with helpers
// for the answers a fabric gives (a response with data, a bad status, a
// malformed reply, silence, an ibsim-style dropped packet).
package madtest
