//go:build !race

package analysis_test

const raceBuild = false
