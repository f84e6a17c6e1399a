// Package procmem reads this process's memory use from /proc on Linux.
package procmem
