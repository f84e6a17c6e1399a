package flycl

import "fmt"

// LambdaPolicy says how a learn that is not given a λ chooses one.
//
// A learn whose λ equals the one the model's Cholesky factor was made
// keeps the factor and adds the learn's rank-n term to it (a fraction of
// a second at m = 10000, see ridge.Accumulator.AddUpdating); a
// learn whose λ changes refactors G + λI (m³/3 flops, seconds at
// m = 10000). LambdaKeep trades the paper's per-learn GCV for never
// refactoring after the first learn.
type LambdaPolicy int

const (
	// LambdaGCV chooses λ by GCV on each learn's own samples (the paper's
	// rule, the default).
	LambdaGCV LambdaPolicy = iota
	// LambdaKeep chooses λ by GCV on the first learn only; later learns
	// keep the model's λ (see LearnOptions).
	LambdaKeep
)

func (p LambdaPolicy) String() string {
	if p == LambdaKeep {
		return "keep"
	}
	return "gcv"
}

// LambdaPolicyHelp says what each policy does, for the help of a flag
// or a setting that chooses one (flycl learn's and serve's
// --lambda-policy, after what the policy applies to: "without --lambda: ").
const LambdaPolicyHelp = "gcv chooses λ on every learn; keep keeps the model's λ once it has one (a small learn then never refactors)"

// ParseLambdaPolicy parses "gcv" (or "") and "keep".
func ParseLambdaPolicy(s string) (LambdaPolicy, error) {
	switch s {
	case "gcv", "":
		return LambdaGCV, nil
	case "keep":
		return LambdaKeep, nil
	}
	return LambdaGCV, fmt.Errorf("flycl: unknown lambda policy %q (want gcv or keep)", s)
}

// MarshalText writes the policy's name ("gcv" or "keep").
func (p LambdaPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a policy's name.
func (p *LambdaPolicy) UnmarshalText(b []byte) error {
	v, err := ParseLambdaPolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}
