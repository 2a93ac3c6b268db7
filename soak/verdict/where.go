package verdict

// Mapping is a class of memory mappings ("[heap]", "anonymous", a file's
// path, "[stack]", "shared memory") and its part of a resource's growth
// between the soak's start and end.
type Mapping struct {
	Name        string  `json:"name"`
	GrowthBytes float64 `json:"growth_bytes"`
	// Share is GrowthBytes over the growth of every class that grew.
	Share float64 `json:"share"`
	// New counts the mappings of the class that appeared during the soak.
	New *NewMappings `json:"new,omitempty"`
}

// NewMappings are the anonymous mappings that appeared during the soak,
// grouped by size.
type NewMappings struct {
	Count int         `json:"count"`
	Bytes float64     `json:"rss_bytes"`
	Sizes []SizeCount `json:"sizes"`
	// Arenas counts those shaped like glibc malloc arenas (64 MiB aligned).
	Arenas int `json:"arenas,omitempty"`
}

// SizeCount is Count mappings of SizeBytes each.
type SizeCount struct {
	SizeBytes float64 `json:"size_bytes"`
	Count     int     `json:"count"`
}

// Site is an allocation site (a Go function, file:line) or a class (a JVM
// class histogram's) whose live memory grew during the soak.
type Site struct {
	Site string `json:"site"`
	// Kind is "go-heap" (pprof inuse_space) or "jvm-class"
	// (GC.class_histogram).
	Kind          string  `json:"kind"`
	GrowthBytes   float64 `json:"growth_bytes"`
	GrowthObjects float64 `json:"growth_objects"`
	// PerRequest and ObjectsPerRequest divide the growth by the requests
	// between the two snapshots.
	PerRequest        float64 `json:"per_request"`
	ObjectsPerRequest float64 `json:"objects_per_request"`
	// Share is GrowthBytes over the growth of every site that grew.
	Share float64 `json:"share"`
	// Endpoints split the site's growth between the load's endpoints,
	// when the live heap was read at each block of the designed mix (a
	// Go heap profile): the site's bytes fitted on the endpoints' counts
	// as AttributeLiveHeap fits the whole heap.
	Endpoints []SiteEndpoint `json:"endpoints,omitempty"`
}

// SiteEndpoint is one endpoint's part in an allocation site's growth.
type SiteEndpoint struct {
	Endpoint   string     `json:"endpoint"`
	PerRequest float64    `json:"per_request"` // bytes per request of this endpoint
	CI95       [2]float64 `json:"ci95"`
}
