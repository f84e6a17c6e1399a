package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flycl/flycl"
)

// ParseValues reads a sweep's values as a user gives them (comma-separated
// integers) and checks each against cfg (With). Errors quote the values.
func ParseValues(cfg flycl.Config, param, values string) ([]int, error) {
	var vs []int
	for _, s := range strings.Split(values, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--values %s: %q is not an integer", values, s)
		}
		if _, err := With(cfg, param, v); err != nil {
			return nil, fmt.Errorf("--param %s --values %s: %w", param, values, err)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// CheckDim checks every configuration of the sweep against the feature
// dimension d (flycl.Config.Validate).
func CheckDim(cfg flycl.Config, param string, values []int, d int) error {
	for _, v := range values {
		c, err := With(cfg, param, v)
		if err != nil {
			return err
		}
		if err := c.Validate(d); err != nil {
			return fmt.Errorf("sweep: %s = %d: %w", param, v, err)
		}
	}
	return nil
}
