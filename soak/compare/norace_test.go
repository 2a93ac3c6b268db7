//go:build !race

package compare_test

const raceBuild = false
