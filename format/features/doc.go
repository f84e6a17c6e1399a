// Package features reads and writes feature files: NumPy .npz archives
// holding the frozen-backbone features of a data set split, so that any
// framework can produce them and Fly-CL can learn from them.
//
// A feature file holds
//
//	features     N×d float32 (any float dtype is converted)
//	labels       N integers (any integer dtype, or floats holding integers)
//	paths        N strings, optional: where each sample came from
//	class_names  C strings, optional: the name of class i at index i
//	extract_seconds  float, optional: wall time spent extracting
//	pipeline     1 string, optional: the backbone identity flycl extract
//	             records (JSON, opaque here; modelfile.ParsePipeline reads it)
//
// which is what numpy.savez(path, features=F, labels=y) writes from Python.
package features
