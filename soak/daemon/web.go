package daemon

import "net/http"

// mountWeb adds the web pages (package soak/web) to mux.
func (d *Daemon) mountWeb(mux *http.ServeMux) {}
