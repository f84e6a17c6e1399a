// Package parallel splits loops over the CPUs.
package parallel
