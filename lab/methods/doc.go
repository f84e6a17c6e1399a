// Package methods adapts Fly-CL and the methods it is compared with to the
// experiment runner, and names them for the command line.
package methods
