//go:build !race

package abrun

const raceBuild = false
