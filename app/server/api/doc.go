// Package api holds the wire types of the flycl server's HTTP API (/v1)
// and a small Go client for it.
//
// The server (package server) answers every request with one of these
// types as JSON, and every error with an ErrorBody; Client sends them,
// with the bearer token and the RequestHeader a server asks of browsers,
// and returns an error response as an *Error that carries its status.
// The package imports nothing of the server, so a client program links
// no model, backbone or HTTP server code.
package api
