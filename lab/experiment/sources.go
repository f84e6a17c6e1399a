package experiment

// Sources are the files a run reads, for Config.Inputs: each as resolved
// (the file identified) and, where it differs, as the user gave it (the
// path recorded). An empty path is a file the run does not read.
type Sources struct {
	Train, Test string // feature files
	// Data is the data set's folder or archive; DataGiven its path as the
	// user gave it ("" for the data set's default location).
	Data, DataGiven string
	// Weights is the backbone's weights file or folder; WeightsGiven the
	// path of the backbone spec ("" for a models folder's).
	Weights, WeightsGiven string
	W                     string // projection W file
}

// Identify identifies every file of s (Identify), in the order train,
// test, data, weights, w.
func (s Sources) Identify() ([]Input, error) {
	var ins []Input
	for _, f := range []struct{ role, path, given string }{
		{"train", s.Train, s.Train},
		{"test", s.Test, s.Test},
		{"data", s.Data, s.DataGiven},
		{"weights", s.Weights, s.WeightsGiven},
		{"w", s.W, s.W},
	} {
		if f.path == "" {
			continue
		}
		in, err := Identify(f.role, f.path)
		if err != nil {
			return nil, err
		}
		in.Path = f.given
		ins = append(ins, in)
	}
	return ins, nil
}

// DataName names a run's data for captions: the data set as given, or
// the training feature file.
func (c *Config) DataName() string {
	if c.Data != "features" {
		return c.Data
	}
	for _, in := range c.Inputs {
		if in.Role == "train" {
			return in.Path
		}
	}
	return c.Data
}
