package server

import "github.com/flycl/flycl/app/server/api"

// The wire types of the HTTP API live in package api (with a Go client);
// these aliases keep the names the server's code, its Backend and
// ModelView interfaces and their callers use.
type (
	Request         = api.Request
	ErrorBody       = api.ErrorBody
	Class           = api.Class
	Info            = api.Info
	Unknown         = api.Unknown
	ModelResponse   = api.ModelResponse
	ClassesResponse = api.ClassesResponse
	ForgetResponse  = api.ForgetResponse
	Score           = api.Score
	Prediction      = api.Prediction
	PredictResponse = api.PredictResponse
	LearnResponse   = api.LearnResponse
)
