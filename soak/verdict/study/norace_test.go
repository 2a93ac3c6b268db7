//go:build !race

package study

const raceBuild = false
