package appapi

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the API's OpenAPI 3.1 document: every route of Routes, with
// its parameters, bodies, answers and the webhook events.
//
//go:embed openapi.json
var OpenAPI []byte

// ServeOpenAPI serves GET /api/openapi.json.
func ServeOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Write(OpenAPI)
}
